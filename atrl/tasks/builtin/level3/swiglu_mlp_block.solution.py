"""Pre-norm gated MLP block with residual in Triton: n = x / √(mean(x²) + ε) · g (RMS norm over
DIM), y = x + (silu(n W1ᵀ) ⊙ (n W3ᵀ)) W2ᵀ, silu(t) = t · σ(t), projections without bias.

Three launches over the tokens flattened to rows, x: (M, DIM):

* `rms_norm_kernel`: one program per row; the sum of squares is accumulated in BLOCK-wide chunks
  (masked lanes load 0), then n = x · rstd · g is written.
* `swiglu_kernel`: a BLOCK_M × BLOCK_N tile of the gated hidden state. Both projections share the
  loaded tile of n and run two fp32 accumulators side by side over the shared dimension (steps of
  BLOCK_K, IEEE precision, W1ᵀ and W3ᵀ read through their (N, K) strides); the epilogue stores
  silu(a1) · a3, so neither pre-activation ever reaches memory.
* `linear_residual_kernel`: the same tiled matmul for h W2ᵀ, with the residual x added in the
  epilogue.

Masks guard every tail. `ModelNew` has the reference's constructor and creates the same parameters
in the same order, so under the same RNG seed it holds the same weights; forward only reads them.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

EPS = 1e-6


@triton.jit
def rms_norm_kernel(x_ptr, g_ptr, n_ptr, n_cols, stride_x, stride_n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        g = tl.load(g_ptr + cols, mask=mask, other=0.0)
        tl.store(n_ptr + row * stride_n + cols, x * rstd * g, mask=mask)


@triton.jit
def swiglu_kernel(
    n_ptr, w1_ptr, w3_ptr, h_ptr,
    M, N, K,
    stride_nm, stride_nk, stride_w1n, stride_w1k, stride_w3n, stride_w3k, stride_hm, stride_hn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        mask_k = k < K
        n = tl.load(n_ptr + offs_m[:, None] * stride_nm + k[None, :] * stride_nk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        w_mask = mask_k[:, None] & mask_n[None, :]
        w1_t = tl.load(w1_ptr + k[:, None] * stride_w1k + offs_n[None, :] * stride_w1n, mask=w_mask, other=0.0)
        w3_t = tl.load(w3_ptr + k[:, None] * stride_w3k + offs_n[None, :] * stride_w3n, mask=w_mask, other=0.0)
        gate = tl.dot(n, w1_t, gate, input_precision="ieee")
        up = tl.dot(n, w3_t, up, input_precision="ieee")
    h = gate * tl.sigmoid(gate) * up
    tl.store(h_ptr + offs_m[:, None] * stride_hm + offs_n[None, :] * stride_hn, h,
             mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def linear_residual_kernel(
    h_ptr, w_ptr, r_ptr, y_ptr,
    M, N, K,
    stride_hm, stride_hk, stride_wn, stride_wk, stride_rm, stride_rn, stride_ym, stride_yn,
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
        h = tl.load(h_ptr + offs_m[:, None] * stride_hm + k[None, :] * stride_hk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        w_t = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                      mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(h, w_t, acc, input_precision="ieee")
    mask = mask_m[:, None] & mask_n[None, :]
    residual = tl.load(r_ptr + offs_m[:, None] * stride_rm + offs_n[None, :] * stride_rn, mask=mask, other=0.0)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, acc + residual, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        # parameter holders only, created in the reference's order
        self.norm_weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        rows = x.contiguous().view(-1, dim)
        M = rows.shape[0]
        hidden = self.w1.weight.shape[0]
        normed = torch.empty_like(rows)
        BLOCK = min(triton.next_power_of_2(dim), 4096)
        rms_norm_kernel[(M,)](rows, self.norm_weight, normed, dim, rows.stride(0), normed.stride(0), EPS,
                              BLOCK=BLOCK)
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
        w1, w3, w2 = self.w1.weight, self.w3.weight, self.w2.weight
        gated = torch.empty((M, hidden), device=x.device, dtype=x.dtype)
        swiglu_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(hidden, BLOCK_N))](
            normed, w1, w3, gated, M, hidden, dim,
            normed.stride(0), normed.stride(1), w1.stride(0), w1.stride(1), w3.stride(0), w3.stride(1),
            gated.stride(0), gated.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        )
        y = torch.empty_like(rows)
        linear_residual_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(dim, BLOCK_N))](
            gated, w2, rows, y, M, dim, hidden,
            gated.stride(0), gated.stride(1), w2.stride(0), w2.stride(1), rows.stride(0), rows.stride(1),
            y.stride(0), y.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        )
        return y.view(x.shape)
