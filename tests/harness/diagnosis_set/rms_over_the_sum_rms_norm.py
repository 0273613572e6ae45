"""RMS norm over the last dimension in Triton: y = x / sqrt(mean(x^2) + eps) * weight.

One program per row of the (rows, dim) view, two passes in BLOCK-wide chunks (any row length):
the mean of squares (fp32, masked lanes contribute 0), then the scaled output.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_row, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_row
    y_row = y_ptr + row * stride_row
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) + eps)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, x * rstd * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2d = x.contiguous().view(-1, dim)
        y = torch.empty_like(x2d)
        BLOCK = min(triton.next_power_of_2(dim), 4096)
        rms_norm_kernel[(x2d.shape[0],)](x2d, self.weight, y, dim, x2d.stride(0), self.eps, BLOCK=BLOCK)
        return y.view(x.shape)
