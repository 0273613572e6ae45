# flaw: torch.compile generates the GEMM's kernels instead of hand-written Triton
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_leaky_kernel(x_ptr, y_ptr, n, multiplier, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0) * multiplier
    tl.store(y_ptr + offs, tl.where(x >= 0, x, x * slope), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.compiled_gemm = torch.compile(self.gemm)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        h = self.compiled_gemm(x)
        out = torch.empty_like(h)
        n = h.numel()
        scale_leaky_kernel[(triton.cdiv(n, 1024),)](h, out, n, self.multiplier, self.negative_slope, BLOCK=1024)
        return out
