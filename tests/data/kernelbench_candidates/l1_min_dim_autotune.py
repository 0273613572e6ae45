import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_R": 8, "BLOCK_I": 128}, num_warps=4),
        triton.Config({"BLOCK_R": 16, "BLOCK_I": 256}, num_warps=8),
    ],
    key=["R", "inner"],
)
@triton.jit
def min_dim_kernel(x_ptr, y_ptr, R, inner, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    i_mask = i < inner
    acc = tl.full([BLOCK_R, BLOCK_I], float("inf"), tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        mask = (r[:, None] < R) & i_mask[None, :]
        x = tl.load(x_ptr + o * R * inner + r[:, None] * inner + i[None, :], mask=mask, other=float("inf"))
        acc = tl.minimum(acc, x)
    tl.store(y_ptr + o * inner + i, tl.min(acc, axis=0), mask=i_mask)


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
        grid = lambda meta: (outer, triton.cdiv(inner, meta["BLOCK_I"]))
        min_dim_kernel[grid](x, y, R, inner)
        return y
