"""Layer norm over the last dimension in Triton:
y = (x - mean) / sqrt(var + eps) * weight + bias, with mean and biased variance over each row.

One program per row of the (rows, dim) view, three passes in BLOCK-wide chunks (any row length):
the mean, then the variance as the mean of (x - mean)^2 (numerically safer than E[x^2] - mean^2),
then the normalised, affine-transformed output. Masked lanes contribute 0 to both sums.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_row, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_row
    y_row = y_ptr + row * stride_row
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / (n_cols // BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        centred = tl.where(mask, x - mean, 0.0)
        acc += centred * centred
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2d = x.contiguous().view(-1, dim)
        y = torch.empty_like(x2d)
        BLOCK = min(triton.next_power_of_2(dim), 4096)
        layer_norm_kernel[(x2d.shape[0],)](x2d, self.weight, self.bias, y, dim, x2d.stride(0), self.eps, BLOCK=BLOCK)
        return y.view(x.shape)
