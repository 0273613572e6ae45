import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(a_ptr, c_ptr, s, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=m) * s, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        A = A.contiguous()
        C = torch.empty_like(A)
        n = A.numel()
        scale_kernel[(triton.cdiv(n, 4096),)](A, C, s, n, BLOCK=4096, num_warps=8)
        return C
