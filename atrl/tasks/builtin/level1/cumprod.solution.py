"""Inclusive prefix product along dim 1 in Triton: y[i, j] = prod_{k <= j} x[i, k].

One program per row; the row is scanned in BLOCK-wide chunks (any row length): within a chunk
tl.cumprod gives the local prefix products, and `carry` (the running product up to the previous
chunk's end) multiplies them before storing. Masked lanes load 1, so they cannot disturb the scan.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumprod_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    carry = 1.0
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=1.0)
        prefix = tl.cumprod(x, axis=0) * carry
        tl.store(y_ptr + row * stride_y + cols, prefix, mask=mask)
        # the chunk's last valid prefix becomes the carry (a select, so no extra rounding)
        last = tl.minimum(n_cols - c0, BLOCK) - 1
        carry = tl.sum(tl.where(tl.arange(0, BLOCK) == last, prefix, 0.0), axis=0)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        BLOCK = min(triton.next_power_of_2(n_cols), 1024)
        cumprod_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=BLOCK)
        return y
