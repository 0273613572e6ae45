"""Pre-norm transformer block in Triton: h = x + Attn(LN1(x)), y = h + W2 gelu(W1 LN2(h) + b1) + b2,
with causal multi-head attention softmax(q kᵀ / √d + mask) v per head, gelu(z) = ½ z (1 + erf(z / √2))
and LN a layer norm with affine parameters; x: (BATCH, SEQ, DIM), tokens flattened to rows (M, DIM).

Seven launches of three kernels, no copies:

* `layer_norm_kernel`: one program per row, three BLOCK-wide passes (mean, biased variance as the
  mean of (x − mean)², affine output); masked lanes contribute 0.
* `linear_kernel`: a BLOCK_M × BLOCK_N tile of x Wᵀ + b over the shared dimension in steps of
  BLOCK_K (fp32 accumulation, IEEE precision, Wᵀ read through W's (N, K) strides). Constexpr flags
  fuse the epilogues: APPLY_GELU for fc1, ADD_RESIDUAL (+ r) for the attention output projection and
  fc2, so neither the pre-activation nor the un-added branch is stored.
* `causal_attention_kernel`: FlashAttention-style online softmax as in causal_attention. q, k and v
  are read straight out of the fused (M, 3·DIM) projection, viewed as (BATCH, HEADS, SEQ, d) through
  strides; each head's output is written into its columns of an (M, DIM) buffer, which is the
  concatenation of the heads. Keys after the query (j > i) and past SEQ are masked to −∞, and key 0
  is visible to every row, so the running maximum is finite after the first block.

Masks guard every tail. `ModelNew` has the reference's constructor and creates the same layers in
the same order, so under the same RNG seed it holds the same weights; forward only reads them.
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

EPS = 1e-5


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        centred = tl.where(mask, x - mean, 0.0)
        acc += centred * centred
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, (x - mean) * rstd * w + b, mask=mask)


@triton.jit
def linear_kernel(
    x_ptr, w_ptr, b_ptr, r_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_rm, stride_rn, stride_ym, stride_yn,
    APPLY_GELU: tl.constexpr, ADD_RESIDUAL: tl.constexpr,
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
    y = acc + b[None, :]
    if APPLY_GELU:
        y = 0.5 * y * (1.0 + tl.erf(y * 0.7071067811865476))
    if ADD_RESIDUAL:
        y += tl.load(r_ptr + offs_m[:, None] * stride_rm + offs_n[None, :] * stride_rn, mask=mask, other=0.0)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, y, mask=mask)


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


def layer_norm(x: torch.Tensor, norm: nn.LayerNorm) -> torch.Tensor:
    """x: (M, DIM) -> layer norm of each row with norm's weight and bias."""
    y = torch.empty_like(x)
    BLOCK = min(triton.next_power_of_2(x.shape[1]), 4096)
    layer_norm_kernel[(x.shape[0],)](x, norm.weight, norm.bias, y, x.shape[1], x.stride(0), y.stride(0), EPS,
                                     BLOCK=BLOCK)
    return y


def linear(x: torch.Tensor, layer: nn.Linear, apply_gelu: bool = False,
           residual: torch.Tensor | None = None) -> torch.Tensor:
    """x: (M, K) -> x Wᵀ + b, (M, N), optionally through exact GELU, optionally plus residual (M, N)."""
    M, K = x.shape
    weight = layer.weight
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    # without a residual the pointer is never read: pass y to keep the signature fixed
    r = y if residual is None else residual
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    linear_kernel[grid](
        x, weight, layer.bias, r, y, M, N, K,
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), r.stride(0), r.stride(1),
        y.stride(0), y.stride(1),
        APPLY_GELU=apply_gelu, ADD_RESIDUAL=residual is not None,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: int):
        super().__init__()
        self.heads = heads
        # parameter holders only, created in the reference's order
        self.norm1 = nn.LayerNorm(dim, eps=EPS)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim, eps=EPS)
        self.fc1 = nn.Linear(dim, mlp_ratio * dim)
        self.fc2 = nn.Linear(mlp_ratio * dim, dim)

    def attention(self, normed: torch.Tensor, batch: int, seq: int) -> torch.Tensor:
        """normed: (M, DIM) -> concatenated causal attention heads, (M, DIM), before `out`."""
        dim = normed.shape[1]
        head_dim = dim // self.heads
        # (M, 3·DIM) viewed as (B, L, 3, H, d): select q, k, v, then put heads before positions
        qkv = linear(normed, self.qkv).view(batch, seq, 3, self.heads, head_dim)
        q, k, v = (qkv.select(2, i).permute(0, 2, 1, 3) for i in range(3))
        attended = torch.empty((batch * seq, dim), device=normed.device, dtype=normed.dtype)
        o = attended.view(batch, seq, self.heads, head_dim).permute(0, 2, 1, 3)
        BLOCK_M, BLOCK_N = 32, 32
        # tl.dot needs every block dimension to be at least 16
        BLOCK_D = max(16, triton.next_power_of_2(head_dim))
        grid = (triton.cdiv(seq, BLOCK_M), batch * self.heads)
        causal_attention_kernel[grid](
            q, k, v, o, self.heads, seq, head_dim, 1.0 / math.sqrt(head_dim),
            *q.stride(), *k.stride(), *v.stride(), *o.stride(),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        )
        return attended

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        rows = x.contiguous().view(batch * seq, dim)
        attended = self.attention(layer_norm(rows, self.norm1), batch, seq)
        h = linear(attended, self.out, residual=rows)
        hidden = linear(layer_norm(h, self.norm2), self.fc1, apply_gelu=True)
        y = linear(hidden, self.fc2, residual=h)
        return y.view(batch, seq, dim)
