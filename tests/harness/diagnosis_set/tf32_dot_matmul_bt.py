"""C = A @ B^T in Triton, A (M, K), B (N, K), fp32 accumulation.

The transpose is never materialised: each step loads a [BLOCK_N, BLOCK_K] tile of B as stored
(B[n, k] at b_ptr + n * stride_bn + k * stride_bk, contiguous along k, so the load is coalesced)
and hands tl.trans of it to tl.dot, acc += A[rm, k:k+BLOCK_K] @ B[rn, k:k+BLOCK_K]^T.
Each program computes one [BLOCK_M, BLOCK_N] tile of C; masks zero-fill the ragged edges of M, N
and K; `ieee` precision keeps the products in full fp32 (no TF32).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_bt_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                     stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rn[:, None] * stride_bn + ks[None, :] * stride_bk,
                    mask=(rn[:, None] < N) & (ks[None, :] < K), other=0.0)
        acc = tl.dot(a, tl.trans(b), acc)
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc, mask=c_mask)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        N = b.shape[0]
        c = torch.empty((M, N), dtype=a.dtype, device=a.device)
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        matmul_bt_kernel[grid](a, b, c, M, N, K,
                               a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
        return c
