"""ReLU in two launches of two kernels (clamp the negatives, then copy): the second kernel is
lowered after the first has run in the interpreter."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def positive_part(x):
    return tl.where(x > 0, x, 0.0)


@triton.jit
def clamp_kernel(x_ptr, t_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(t_ptr + offs, positive_part(tl.load(x_ptr + offs, mask=mask)), mask=mask)


@triton.jit
def copy_kernel(t_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(t_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        t = torch.empty_like(x)
        y = torch.empty_like(x)
        n = x.numel()
        clamp_kernel[(triton.cdiv(n, 512),)](x, t, n, BLOCK=512)
        copy_kernel[(triton.cdiv(n, 512),)](t, y, n, BLOCK=512)
        return y
