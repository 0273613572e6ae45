# class: persistent-style loop (fixed programs striding over tiles)
# task: builtin/relu
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_persistent_kernel(x_ptr, y_ptr, n, NUM_PROGRAMS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tiles = tl.cdiv(n, BLOCK)
    for tile in range(pid, tiles, NUM_PROGRAMS):
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        relu_persistent_kernel[(3,)](x, y, x.numel(), NUM_PROGRAMS=3, BLOCK=256)
        return y
