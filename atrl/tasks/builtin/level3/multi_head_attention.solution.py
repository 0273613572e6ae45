"""Multi-head self-attention layer in Triton: q = x Wqᵀ + bq (likewise k, v), split into HEADS heads
of size d = DIM / HEADS, a_h = softmax(q_h k_hᵀ / √d) v_h (no mask), y = concat(a_h) Woᵀ + bo.

Five launches, no copies: three `linear_kernel` projections write q, k, v as (M, DIM) row-major
buffers (M = BATCH·SEQ tokens), which are *viewed* as (BATCH, HEADS, SEQ, d) through strides;
`attention_kernel` (FlashAttention-style online softmax, as in causal_attention without the mask)
writes each head's output straight into its columns of a (BATCH, SEQ, HEADS, d) buffer, which is
the concatenation of the heads, so the output projection reads it as (M, DIM).

`linear_kernel` computes a BLOCK_M × BLOCK_N tile of x Wᵀ + b over the shared dimension in steps of
BLOCK_K (fp32 accumulation, IEEE precision, Wᵀ read through W's (N, K) strides). In
`attention_kernel` each program owns BLOCK_M query rows of one (batch, head) and walks all key
blocks, keeping per row a running maximum m_i, normaliser l_i and unnormalised output, rescaled by
exp(m_old − m_new) when m_i grows; keys past SEQ are masked to −∞ and the head dimension is padded
to a power of two with masked loads. Key 0 is always valid, so m_i is finite after the first block.

`ModelNew` has the reference's constructor and creates the same layers in the same order, so under
the same RNG seed it holds the same weights; forward only reads its parameters.
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
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
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        mask_k = k < K
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + k[None, :] * stride_xk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        w_t = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                      mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(x, w_t, acc, input_precision="ieee")
    b = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, acc + b[None, :],
             mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def attention_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    H, L, D, scale,
    sqb, sqh, sql, sqd, skb, skh, skl, skd, svb, svh, svl, svd, sob, soh, sol, sod,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    mask_m = offs_m < L
    mask_d = offs_d < D
    q = tl.load(q_ptr + b * sqb + h * sqh + offs_m[:, None] * sql + offs_d[None, :] * sqd,
                mask=mask_m[:, None] & mask_d[None, :], other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    for n0 in range(0, L, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        mask_n = offs_n < L
        k_t = tl.load(k_ptr + b * skb + h * skh + offs_n[None, :] * skl + offs_d[:, None] * skd,
                      mask=mask_d[:, None] & mask_n[None, :], other=0.0)
        s = tl.dot(q, k_t, input_precision="ieee") * scale
        s = tl.where(mask_n[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + b * svb + h * svh + offs_n[:, None] * svl + offs_d[None, :] * svd,
                    mask=mask_n[:, None] & mask_d[None, :], other=0.0)
        acc = tl.dot(p, v, acc * alpha[:, None], input_precision="ieee")
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * sob + h * soh + offs_m[:, None] * sol + offs_d[None, :] * sod, out,
             mask=mask_m[:, None] & mask_d[None, :])


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x: (M, K), weight: (N, K), bias: (N,) -> x Wᵀ + b, (M, N)."""
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    linear_kernel[grid](
        x, weight, bias, y, M, N, K,
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return y


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor) -> None:
    """q, k, v, o: (B, H, L, D) views with any strides; writes softmax(q kᵀ / √D) v into o."""
    B, H, L, D = q.shape
    BLOCK_M, BLOCK_N = 32, 32
    # tl.dot needs every block dimension to be at least 16
    BLOCK_D = max(16, triton.next_power_of_2(D))
    grid = (triton.cdiv(L, BLOCK_M), B * H)
    attention_kernel[grid](
        q, k, v, o, H, L, D, 1.0 / math.sqrt(D),
        *q.stride(), *k.stride(), *v.stride(), *o.stride(),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
    )


class ModelNew(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        # parameter holders only, created in the reference's order
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        head_dim = dim // self.heads
        rows = x.reshape(batch * seq, dim)

        def heads_view(t: torch.Tensor) -> torch.Tensor:
            # (M, DIM) -> (B, H, L, d) without copying
            return t.view(batch, seq, self.heads, head_dim).permute(0, 2, 1, 3)

        q = heads_view(linear(rows, self.q_proj.weight, self.q_proj.bias))
        k = heads_view(linear(rows, self.k_proj.weight, self.k_proj.bias))
        v = heads_view(linear(rows, self.v_proj.weight, self.v_proj.bias))
        attended = torch.empty((batch * seq, dim), device=x.device, dtype=x.dtype)
        attention(q, k, v, heads_view(attended))
        y = linear(attended, self.o_proj.weight, self.o_proj.bias)
        return y.view(batch, seq, dim)
