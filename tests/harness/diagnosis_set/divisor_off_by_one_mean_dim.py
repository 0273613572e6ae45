"""Mean over the last dimension in Triton: y[r] = (1 / n_cols) * sum_c x[r, c], x viewed as (rows, n_cols).

One program per row; the row is summed in BLOCK-wide chunks (any row length) into an fp32
accumulator, masked lanes loading 0, and the total is divided by n_cols once at the end.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mean_last_dim_kernel(x_ptr, y_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_row
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0) / (n_cols - 1))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2d = x.contiguous().view(-1, n_cols)
        y = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
        BLOCK = min(triton.next_power_of_2(n_cols), 1024)
        mean_last_dim_kernel[(x2d.shape[0],)](x2d, y, n_cols, x2d.stride(0), BLOCK=BLOCK)
        return y
