import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def max_dim_kernel(x_ptr, y_ptr, R, inner, BLOCK_I: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    mask = i < inner
    base = x_ptr + o * R * inner + i
    best = tl.load(base, mask=mask, other=-float("inf"))
    for r in range(1, R):
        best = tl.maximum(best, tl.load(base + r * inner, mask=mask, other=-float("inf")))
    tl.store(y_ptr + o * inner + i, best, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        d = self.dim % x.dim()
        outer = 1
        for s in x.shape[:d]:
            outer *= s
        R = x.shape[d]
        inner = x.numel() // (outer * R)
        y = torch.empty(x.shape[:d] + x.shape[d + 1:], device=x.device, dtype=x.dtype)
        max_dim_kernel[(outer, triton.cdiv(inner, 256))](x, y, R, inner, BLOCK_I=256)
        return y
