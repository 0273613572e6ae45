"""Matrix-vector product in Triton: y[i] = sum_k A[i, k] * x[k], A (M, K), x (K,).

Each program owns BLOCK_M rows and walks K in BLOCK_K chunks, accumulating the elementwise
products A[rows, ks] * x[ks] per lane in fp32 and reducing over k once at the end. The problem is
memory-bound (each A element is used once), so no tl.dot is needed. Masks guard both edges.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, stride_am, stride_ak, stride_x,
                  BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        k_mask = ks < K
        a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=row_mask[:, None] & k_mask[None, :], other=0.0)
        x = tl.load(x_ptr + ks * stride_x, mask=k_mask, other=0.0)
        acc += a * x[None, :]
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_mask)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        y = torch.empty(M, dtype=a.dtype, device=a.device)
        BLOCK_M, BLOCK_K = 16, 256
        matvec_kernel[(triton.cdiv(M, BLOCK_M),)](a, x, y, M, K, a.stride(0), a.stride(1), x.stride(0),
                                                  BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K)
        return y
