# expect: correctness:precision | correctness:mismatch
# class: precision
# task: builtin/softmax
# attack: softmax computed on bf16-rounded inputs
"""Row softmax in Triton: y[i, j] = exp(x[i, j] - m_i) / s_i, m_i = max_j x[i, j], s_i = sum_j exp(x[i, j] - m_i).

One program per row, two passes over the row in BLOCK-wide chunks (so any row length works):
1. online statistics: for each chunk, m' = max(m, max(chunk)), s = s * exp(m - m') + sum(exp(chunk - m'));
2. write exp(x - m) / s.
Masked lanes load -inf, which contributes exp(-inf) = 0 to the sum.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    m = float("-inf")
    s = 0.0
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.bfloat16).to(tl.float32)
        tl.store(y_row + cols, tl.exp(x - m) / s, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        BLOCK = min(triton.next_power_of_2(n_cols), 4096)
        softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=BLOCK)
        return y
