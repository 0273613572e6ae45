"""Linear + average pooling of adjacent outputs + exact GELU, in one Triton kernel:
h = x Wᵀ + b, y[m, g] = gelu((1/POOL) Σ_{t<POOL} h[m, g·POOL + t]), g < G = ⌊N / POOL⌋.

Each program computes a BLOCK_M × BLOCK_G tile of y. Its BLOCK_G · P columns of h (P = POOL rounded up
to a power of two) are laid out group by group: column c stands for feature n = g·POOL + t with
g = c // P and t = c % P; slots with t ≥ POOL (padding of the group) or g ≥ G are masked to zero, in
the weights and in the bias. The h tile is accumulated over K with tl.dot (fp32, IEEE precision),
biased, reshaped to (BLOCK_M, BLOCK_G, P) and summed over the last axis, so h never reaches memory.

`ModelNew` has the reference's constructor and creates the same `nn.Linear`, so under the same RNG
seed it holds the same weights; forward only reads its parameters.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_avgpool_gelu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, G, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yg,
    POOL: tl.constexpr, POOL_P2: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_G: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_g = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_G * POOL_P2)
    group = pid_g * BLOCK_G + cols // POOL_P2
    slot = cols % POOL_P2
    offs_n = group * POOL + slot
    mask_n = (slot < POOL) & (group < G)
    mask_m = offs_m < M
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_G * POOL_P2), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        mask_k = k < K
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + k[None, :] * stride_xk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        w_t = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                      mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(x, w_t, acc, input_precision="ieee")
    b = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0)
    h = acc + b[None, :]
    pooled = tl.sum(tl.reshape(h, (BLOCK_M, BLOCK_G, POOL_P2)), axis=2) / POOL
    y = 0.5 * pooled * (1.0 + tl.erf(pooled * 0.7071067811865476))
    offs_g = pid_g * BLOCK_G + tl.arange(0, BLOCK_G)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_g[None, :] * stride_yg, y,
             mask=mask_m[:, None] & (offs_g[None, :] < G))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, pool: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # parameter holder only
        self.pool = pool

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, b = self.linear.weight, self.linear.bias
        M, K = x.shape
        G = w.shape[0] // self.pool
        y = torch.empty((M, G), device=x.device, dtype=x.dtype)
        pool_p2 = triton.next_power_of_2(self.pool)
        BLOCK_M, BLOCK_K = 64, 32
        BLOCK_G = max(1, 64 // pool_p2)
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(G, BLOCK_G))
        linear_avgpool_gelu_kernel[grid](
            x, w, b, y, M, G, K,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
            POOL=self.pool, POOL_P2=pool_p2, BLOCK_M=BLOCK_M, BLOCK_G=BLOCK_G, BLOCK_K=BLOCK_K,
        )
        return y
