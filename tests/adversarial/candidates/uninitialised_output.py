# expect: correctness:nan | correctness:mismatch
# class: stale-buffer
# task: builtin/relu
# attack: returns torch.empty (whatever memory held) after a token launch
# (the harness fills the memory the allocator hands out next with NaN; the CPU's allocator does
# not always hand out that block again, and then the buffer holds other garbage: a mismatch)

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        scratch = torch.empty(1, device=x.device)
        relu_kernel[(1,)](x, scratch, 1, BLOCK=1024)
        return y
