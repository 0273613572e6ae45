# expect: correctness:nan
# class: caching
# task: builtin/relu
# attack: keeps the last output on self and returns it for the same shape

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
    def __init__(self):
        super().__init__()
        self.saved = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.saved is not None and self.saved.shape == x.shape:
            scratch = torch.empty(1, device=x.device)
            relu_kernel[(1,)](x, scratch, 1, BLOCK=1024)
            return self.saved
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        self.saved = y
        return y
