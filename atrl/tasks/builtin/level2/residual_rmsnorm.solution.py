"""Residual add + RMS norm in one Triton kernel: h = x + r, y = h / √(mean(h²) + ε) · g.

One program per row. The first sweep over the row's columns accumulates Σ h² (h recomputed from x
and r, never stored); the second sweep recomputes h and writes h · rstd · g. Masks guard the tail
of every sweep, so any hidden size works; rows are addressed through their strides.

`ModelNew` has the reference's constructor and creates the same gain parameter with the same RNG
calls, so under the same seed it holds the same values; forward only reads it.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

EPS = 1e-6


@triton.jit
def residual_rmsnorm_kernel(
    x_ptr, r_ptr, g_ptr, y_ptr, N, stride_xm, stride_rm, stride_ym, eps, BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK):
        n = n0 + cols
        mask = n < N
        h = tl.load(x_ptr + row * stride_xm + n, mask=mask, other=0.0) + \
            tl.load(r_ptr + row * stride_rm + n, mask=mask, other=0.0)
        acc += h * h
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for n0 in range(0, N, BLOCK):
        n = n0 + cols
        mask = n < N
        h = tl.load(x_ptr + row * stride_xm + n, mask=mask, other=0.0) + \
            tl.load(r_ptr + row * stride_rm + n, mask=mask, other=0.0)
        g = tl.load(g_ptr + n, mask=mask, other=0.0)
        tl.store(y_ptr + row * stride_ym + n, h * rstd * g, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        # the kernel walks columns with unit stride
        x = x.contiguous()
        residual = residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        residual_rmsnorm_kernel[(M,)](x, residual, self.weight, y, N, x.stride(0), residual.stride(0),
                                      y.stride(0), EPS, BLOCK=min(1024, triton.next_power_of_2(N)))
        return y
