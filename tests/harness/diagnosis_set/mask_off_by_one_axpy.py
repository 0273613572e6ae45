"""Scaled multiply-add (BLAS axpy) in Triton: z = alpha * x + y, elementwise.

Each program handles BLOCK contiguous elements of the flattened tensors; the mask guards the tail.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def axpy_kernel(x_ptr, y_ptr, z_ptr, n_elements, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements - 1
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    tl.store(z_ptr + offsets, alpha * x + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = y.contiguous()
        z = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        axpy_kernel[(triton.cdiv(n, BLOCK),)](x, y, z, n, self.alpha, BLOCK=BLOCK)
        return z
