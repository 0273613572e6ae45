"""Linear + residual add, then layer norm: h = x Wᵀ + b + r, y = (h − μ) · r_σ · γ + β with
μ = mean(h), r_σ = 1/√(var(h) + ε) per row (biased variance).

Two Triton kernels. `linear_residual_kernel` is a tiled matmul (fp32 accumulation, IEEE precision,
Wᵀ read through W's strides) whose epilogue adds the bias and the residual tile before its single
store of h. `layernorm_kernel` normalises one row of h per program in three sweeps over its columns:
the mean, the centred sum of squares (precise when |μ| ≫ σ), then the affine normalisation.

`ModelNew` has the reference's constructor and creates the same `nn.Linear` and `nn.LayerNorm` in
the same order, so under the same RNG seed it holds the same parameters; forward only reads them.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_residual_kernel(
    x_ptr, w_ptr, b_ptr, r_ptr, h_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_rm, stride_rn, stride_hm, stride_hn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        mask_k = k < K
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + k[None, :] * stride_xk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        w_t = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                      mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(x, w_t, acc, input_precision="ieee")
    mask = mask_m[:, None] & mask_n[None, :]
    b = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0)
    r = tl.load(r_ptr + offs_m[:, None] * stride_rm + offs_n[None, :] * stride_rn, mask=mask, other=0.0)
    tl.store(h_ptr + offs_m[:, None] * stride_hm + offs_n[None, :] * stride_hn, acc + b[None, :] + r,
             mask=mask)


@triton.jit
def layernorm_kernel(h_ptr, gamma_ptr, beta_ptr, y_ptr, N, stride_hm, stride_ym, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    h_row = h_ptr + row * stride_hm
    y_row = y_ptr + row * stride_ym
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK):
        n = n0 + cols
        acc += tl.load(h_row + n, mask=n < N, other=0.0)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK):
        n = n0 + cols
        h = tl.load(h_row + n, mask=n < N, other=0.0)
        d = tl.where(n < N, h - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for n0 in range(0, N, BLOCK):
        n = n0 + cols
        mask = n < N
        h = tl.load(h_row + n, mask=mask, other=0.0)
        gamma = tl.load(gamma_ptr + n, mask=mask, other=0.0)
        beta = tl.load(beta_ptr + n, mask=mask, other=0.0)
        tl.store(y_row + n, (h - mean) * rstd * gamma + beta, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, hidden: int):
        super().__init__()
        # parameter holders only, created in the reference's order
        self.linear = nn.Linear(in_features, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        w, b = self.linear.weight, self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        h = torch.empty((M, N), device=x.device, dtype=torch.float32)
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        linear_residual_kernel[grid](
            x, w, b, residual, h, M, N, K,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1),
            residual.stride(0), residual.stride(1), h.stride(0), h.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        )
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        layernorm_kernel[(M,)](h, self.norm.weight, self.norm.bias, y, N, h.stride(0), y.stride(0),
                               self.norm.eps, BLOCK=min(1024, triton.next_power_of_2(N)))
        return y
