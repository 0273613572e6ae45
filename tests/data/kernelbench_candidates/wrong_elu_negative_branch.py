# flaw: the negative branch of ELU uses alpha * x instead of alpha * (exp(x) - 1): right only for x >= 0
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def elu_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.where(x > 0, x, alpha * x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        elu_kernel[(triton.cdiv(n, 1024),)](x, y, n, self.alpha, BLOCK=1024)
        return y
