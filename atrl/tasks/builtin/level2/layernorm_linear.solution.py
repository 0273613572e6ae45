"""Layer norm fused into the prologue of a linear layer:
x̂ = (x − μ) · r · γ + β with μ = mean(x), r = 1/√(var(x) + ε) per row (biased variance), y = x̂ Wᵀ + b.

Two Triton kernels. `row_stats_kernel` computes μ and r for each row in two sweeps over its columns
(mean first, then the centred sum of squares, which keeps precision when |μ| ≫ σ). `ln_linear_kernel`
is a tiled matmul whose A-operand tiles are normalised as they are loaded, so x̂ is never written to
memory; accumulation is fp32 in IEEE precision and bias is added in the epilogue. Columns past K
load γ = β = 0, so the normalised tail is exactly zero.

`ModelNew` has the reference's constructor and creates the same `nn.LayerNorm` and `nn.Linear` in
the same order, so under the same RNG seed it holds the same parameters; forward only reads them.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_stats_kernel(x_ptr, mean_ptr, rstd_ptr, K, stride_xm, stride_xk, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        k = k0 + cols
        acc += tl.load(x_row + k * stride_xk, mask=k < K, other=0.0)
    mean = tl.sum(acc, axis=0) / K
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        k = k0 + cols
        x = tl.load(x_row + k * stride_xk, mask=k < K, other=0.0)
        d = tl.where(k < K, x - mean, 0.0)
        acc += d * d
    var = tl.sum(acc, axis=0) / K
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, 1.0 / tl.sqrt(var + eps))


@triton.jit
def ln_linear_kernel(
    x_ptr, mean_ptr, rstd_ptr, gamma_ptr, beta_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    mean = tl.load(mean_ptr + offs_m, mask=mask_m, other=0.0)
    rstd = tl.load(rstd_ptr + offs_m, mask=mask_m, other=0.0)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        mask_k = k < K
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + k[None, :] * stride_xk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        gamma = tl.load(gamma_ptr + k, mask=mask_k, other=0.0)
        beta = tl.load(beta_ptr + k, mask=mask_k, other=0.0)
        x_hat = (x - mean[:, None]) * rstd[:, None] * gamma[None, :] + beta[None, :]
        w_t = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                      mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(x_hat, w_t, acc, input_precision="ieee")
    b = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, acc + b[None, :],
             mask=mask_m[:, None] & mask_n[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        # parameter holders only, created in the reference's order
        self.norm = nn.LayerNorm(in_features, eps=1e-5)
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, b = self.linear.weight, self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        mean = torch.empty((M,), device=x.device, dtype=torch.float32)
        rstd = torch.empty((M,), device=x.device, dtype=torch.float32)
        row_stats_kernel[(M,)](x, mean, rstd, K, x.stride(0), x.stride(1), self.norm.eps,
                               BLOCK=min(1024, triton.next_power_of_2(K)))
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        ln_linear_kernel[grid](
            x, mean, rstd, self.norm.weight, self.norm.bias, w, b, y, M, N, K,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        )
        return y
