"""SwiGLU projection in one Triton kernel: y = silu(x W1ᵀ) ⊙ (x W3ᵀ), silu(t) = t · σ(t).

Each program computes a BLOCK_M × BLOCK_N tile of y. One pass over the shared dimension K loads each
x tile once and multiplies it by the matching tiles of W1ᵀ and W3ᵀ (read from the (N, K) weights
through their strides) into two fp32 accumulators, in IEEE precision (no TF32). The gate
silu(g) · u is applied before the single store, so neither projection is written to memory.

`ModelNew` has the reference's constructor and creates the same two `nn.Linear` in the same order,
so under the same RNG seed it holds the same weights; forward only reads its parameters.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(
    x_ptr, w1_ptr, w3_ptr, y_ptr,
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
    gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        mask_k = k < K
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + k[None, :] * stride_xk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        w_offsets = k[:, None] * stride_wk + offs_n[None, :] * stride_wn
        w_mask = mask_k[:, None] & mask_n[None, :]
        w1_t = tl.load(w1_ptr + w_offsets, mask=w_mask, other=0.0)
        w3_t = tl.load(w3_ptr + w_offsets, mask=w_mask, other=0.0)
        gate = tl.dot(x, w1_t, gate, input_precision="ieee")
        up = tl.dot(x, w3_t, up, input_precision="ieee")
    y = gate * tl.sigmoid(gate) * up
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, y,
             mask=mask_m[:, None] & mask_n[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_features: int, hidden: int):
        super().__init__()
        # parameter holders only
        self.w1 = nn.Linear(in_features, hidden, bias=False)
        self.w3 = nn.Linear(in_features, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w1, w3 = self.w1.weight, self.w3.weight
        M, K = x.shape
        N = w1.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        # both weights come from nn.Linear of one shape, so they share strides
        swiglu_kernel[grid](
            x, w1, w3, y, M, N, K,
            x.stride(0), x.stride(1), w1.stride(0), w1.stride(1), y.stride(0), y.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        )
        return y
