# flaw: returns the sum without the kept dimension (shape (B, N) instead of (B, 1, N))
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, y_ptr, R, inner, BLOCK_I: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    mask = i < inner
    acc = tl.zeros([BLOCK_I], tl.float32)
    for r in range(0, R):
        acc += tl.load(x_ptr + o * R * inner + r * inner + i, mask=mask, other=0.0)
    tl.store(y_ptr + o * inner + i, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        outer, R = x.shape[0], x.shape[1]
        inner = x.numel() // (outer * R)
        y = torch.empty((outer,) + tuple(x.shape[2:]), device=x.device, dtype=x.dtype)
        sum_kernel[(outer, triton.cdiv(inner, 256))](x, y, R, inner, BLOCK_I=256)
        return y
