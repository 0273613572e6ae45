"""Transformer MLP block in two Triton matmul launches: h = gelu(x W1ᵀ + b1), y = h W2ᵀ + b2,
gelu(z) = ½ z (1 + erf(z / √2)).

Tokens are flattened to rows, x: (M, DIM). `linear_kernel` computes a BLOCK_M × BLOCK_N tile of
x Wᵀ + b over the shared dimension in steps of BLOCK_K (fp32 accumulation, IEEE precision, Wᵀ read
through W's (N, K) strides); the constexpr APPLY_GELU fuses the activation into the first launch's
epilogue, so the pre-activation is never stored. Masks guard every tail.

`ModelNew` has the reference's constructor and creates the same layers in the same order, so under
the same RNG seed it holds the same weights; forward only reads its parameters.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    APPLY_GELU: tl.constexpr,
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
    y = acc + b[None, :]
    if APPLY_GELU:
        y = 0.5 * y * (1.0 + tl.erf(y * 0.7071067811865476))
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, y,
             mask=mask_m[:, None] & mask_n[None, :])


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, apply_gelu: bool) -> torch.Tensor:
    """x: (M, K), weight: (N, K), bias: (N,) -> (M, N), optionally through exact GELU."""
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    linear_kernel[grid](
        x, weight, bias, y, M, N, K,
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0), y.stride(1),
        APPLY_GELU=apply_gelu, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        # parameter holders only, created in the reference's order
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        h = linear(rows, self.fc1.weight, self.fc1.bias, apply_gelu=True)
        y = linear(h, self.fc2.weight, self.fc2.bias, apply_gelu=False)
        return y.view(*x.shape[:-1], y.shape[-1])
