import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_dim_kernel(x_ptr, y_ptr, R, inner, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    """x viewed as (outer, R, inner): y[o, i] = sum over r of x[o, r, i], accumulated in tiles."""
    o = tl.program_id(0).to(tl.int64)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    i_mask = i < inner
    base = x_ptr + o * R * inner
    acc = tl.zeros([BLOCK_R, BLOCK_I], tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        mask = (r[:, None] < R) & i_mask[None, :]
        acc += tl.load(base + r[:, None] * inner + i[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + o * inner + i, tl.sum(acc, axis=0), mask=i_mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        dim = self.dim % x.dim()
        shape = list(x.shape)
        R = shape[dim]
        outer = 1
        for s in shape[:dim]:
            outer *= s
        inner = x.numel() // (outer * R)
        shape[dim] = 1
        y = torch.empty(shape, device=x.device, dtype=x.dtype)
        grid = (outer, triton.cdiv(inner, 64))
        sum_dim_kernel[grid](x, y, R, inner, BLOCK_R=32, BLOCK_I=64)
        return y
