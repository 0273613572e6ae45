"""Add + layer norm + exact GELU in one Triton kernel: h = x + r,
z = (h − μ) / √(var(h) + ε) · γ + β (biased variance), y = ½ z (1 + erf(z / √2)).

One program per row, three sweeps over its columns: Σ h for the mean, the centred Σ (h − μ)² for the
variance (precise when |μ| ≫ σ), then normalisation, affine transform and GELU with one store.
h is recomputed from x and r in each sweep instead of being stored. Masks guard every tail.

`ModelNew` has the reference's constructor and creates the same `nn.LayerNorm`, so it holds the same
parameters; forward only reads them.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_layernorm_gelu_kernel(
    x_ptr, r_ptr, gamma_ptr, beta_ptr, y_ptr, N, stride_xm, stride_rm, stride_ym, eps,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK):
        n = n0 + cols
        mask = n < N
        acc += tl.load(x_ptr + row * stride_xm + n, mask=mask, other=0.0) + \
            tl.load(r_ptr + row * stride_rm + n, mask=mask, other=0.0)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK):
        n = n0 + cols
        mask = n < N
        h = tl.load(x_ptr + row * stride_xm + n, mask=mask, other=0.0) + \
            tl.load(r_ptr + row * stride_rm + n, mask=mask, other=0.0)
        d = tl.where(mask, h - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for n0 in range(0, N, BLOCK):
        n = n0 + cols
        mask = n < N
        h = tl.load(x_ptr + row * stride_xm + n, mask=mask, other=0.0) + \
            tl.load(r_ptr + row * stride_rm + n, mask=mask, other=0.0)
        gamma = tl.load(gamma_ptr + n, mask=mask, other=0.0)
        beta = tl.load(beta_ptr + n, mask=mask, other=0.0)
        z = (h - mean) * rstd * gamma + beta
        tl.store(y_ptr + row * stride_ym + n, 0.5 * z * (1.0 + tl.erf(z * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)  # parameter holder only

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        # the kernel walks columns with unit stride
        x = x.contiguous()
        residual = residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        add_layernorm_gelu_kernel[(M,)](
            x, residual, self.norm.weight, self.norm.bias, y, N,
            x.stride(0), residual.stride(0), y.stride(0), self.norm.eps,
            BLOCK=min(1024, triton.next_power_of_2(N)),
        )
        return y
