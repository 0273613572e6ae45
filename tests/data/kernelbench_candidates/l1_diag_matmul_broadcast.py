import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def diag_mul_kernel(a_ptr, b_ptr, c_ptr, M, stride_b, stride_c, BLOCK_M: tl.constexpr):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = cols < M
    a = tl.load(a_ptr + row)
    b = tl.load(b_ptr + row * stride_b + cols, mask=mask)
    tl.store(c_ptr + row * stride_c + cols, a * b, mask=mask)


class ModelNew(nn.Module):
    """diag(A) @ B without building the diagonal matrix: row i of B scaled by A[i]."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A = A.contiguous()
        B = B.contiguous()
        N, M = B.shape
        C = torch.empty_like(B)
        grid = (N, triton.cdiv(M, 1024))
        diag_mul_kernel[grid](A, B, C, M, B.stride(0), C.stride(0), BLOCK_M=1024)
        return C
