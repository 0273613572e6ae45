import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def hardtanh_kernel(x_ptr, y_ptr, n, lo, hi, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, tl.minimum(tl.maximum(x, lo), hi))
    else:
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m, other=0.0)
        tl.store(y_ptr + offs, tl.minimum(tl.maximum(x, lo), hi), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.min_val, self.max_val = -1.0, 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        hardtanh_kernel[(triton.cdiv(n, 2048),)](x, y, n, self.min_val, self.max_val, BLOCK=2048)
        return y
