"""Causal attention core as one fused Triton kernel (FlashAttention-style online softmax):
y_i = Σ_{j ≤ i} p_ij v_j, p_ij = exp(s_ij − m_i) / Σ_{j' ≤ i} exp(s_ij' − m_i), s_ij = q_i · k_j / √d.

Each program owns BLOCK_M query rows of one (batch, head). It walks the key blocks up to the last
key its rows may see, computes the score tile with tl.dot (fp32, IEEE precision), masks keys after
the query (j > i) and past the sequence to −∞, and keeps per row a running maximum m_i, normaliser
l_i and unnormalised output: when m_i grows, l_i and the accumulator are rescaled by exp(m_old − m_new).
The (SEQ × SEQ) score matrix is never materialised. Key 0 is visible to every row, so m_i is finite
after the first block. The head dimension is padded to a power of two with masked loads.
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(
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
    # keys after this block's last query are masked for all its rows: stop there
    end = tl.minimum((pid_m + 1) * BLOCK_M, L)
    for n0 in range(0, end, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        mask_n = offs_n < L
        k_t = tl.load(k_ptr + b * skb + h * skh + offs_n[None, :] * skl + offs_d[:, None] * skd,
                      mask=mask_d[:, None] & mask_n[None, :], other=0.0)
        s = tl.dot(q, k_t, input_precision="ieee") * scale
        visible = (offs_n[None, :] <= offs_m[:, None]) & mask_n[None, :]
        s = tl.where(visible, s, float("-inf"))
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


class ModelNew(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        B, H, L, D = q.shape
        o = torch.empty((B, H, L, D), device=q.device, dtype=q.dtype)
        BLOCK_M, BLOCK_N = 32, 32
        # tl.dot needs every block dimension to be at least 16
        BLOCK_D = max(16, triton.next_power_of_2(D))
        grid = (triton.cdiv(L, BLOCK_M), B * H)
        causal_attention_kernel[grid](
            q, k, v, o, H, L, D, 1.0 / math.sqrt(D),
            *q.stride(), *k.stride(), *v.stride(), *o.stride(),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        )
        return o
