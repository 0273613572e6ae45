"""Softmax-weighted sum (attention pooling) in one Triton kernel:
p_l = exp(s_l − m) / Σ_l' exp(s_l' − m) with m = max_l s_l, y[b, d] = Σ_l p_l · v[b, l, d].

Each program owns one batch row b and BLOCK_D output features. Sweep 1 over the sequence computes the
row maximum and the normaliser with the online-softmax recurrence (per-lane running max and rescaled
sum, merged at the end). Sweep 2 loads (BLOCK_L × BLOCK_D) value tiles, weights them by the
normalised probabilities and accumulates the column sums in fp32; the probabilities are never stored.
Masked sequence positions load s = −∞ (weight 0) and v = 0.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_weighted_sum_kernel(
    s_ptr, v_ptr, y_ptr, L, D,
    stride_sb, stride_sl, stride_vb, stride_vl, stride_vd, stride_yb, stride_yd,
    BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr,
):
    b = tl.program_id(0)
    pid_d = tl.program_id(1)
    offs_l = tl.arange(0, BLOCK_L)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask_d = offs_d < D
    m = tl.full((BLOCK_L,), float("-inf"), dtype=tl.float32)
    z = tl.zeros((BLOCK_L,), dtype=tl.float32)
    for l0 in range(0, L, BLOCK_L):
        l_idx = l0 + offs_l
        s = tl.load(s_ptr + b * stride_sb + l_idx * stride_sl, mask=l_idx < L, other=float("-inf"))
        m_new = tl.maximum(m, s)
        # lanes that have only seen -inf keep z = 0 (avoid exp(-inf - -inf) = nan)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        z = z * tl.exp(m - m_safe) + tl.exp(s - m_safe)
        m = m_new
    m_row = tl.max(m, axis=0)
    denom = tl.sum(z * tl.where(m == float("-inf"), 0.0, tl.exp(m - m_row)), axis=0)
    acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for l0 in range(0, L, BLOCK_L):
        l_idx = l0 + offs_l
        mask_l = l_idx < L
        s = tl.load(s_ptr + b * stride_sb + l_idx * stride_sl, mask=mask_l, other=float("-inf"))
        p = tl.exp(s - m_row) / denom
        v = tl.load(v_ptr + b * stride_vb + l_idx[:, None] * stride_vl + offs_d[None, :] * stride_vd,
                    mask=mask_l[:, None] & mask_d[None, :], other=0.0)
        acc += tl.sum(p[:, None] * v, axis=0)
    tl.store(y_ptr + b * stride_yb + offs_d * stride_yd, acc, mask=mask_d)


class ModelNew(nn.Module):
    def forward(self, scores: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        B, L, D = values.shape
        y = torch.empty((B, D), device=values.device, dtype=values.dtype)
        BLOCK_L, BLOCK_D = 64, 64
        grid = (B, triton.cdiv(D, BLOCK_D))
        softmax_weighted_sum_kernel[grid](
            scores, values, y, L, D,
            scores.stride(0), scores.stride(1), values.stride(0), values.stride(1), values.stride(2),
            y.stride(0), y.stride(1),
            BLOCK_L=BLOCK_L, BLOCK_D=BLOCK_D,
        )
        return y
