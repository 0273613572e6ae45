# class: 2-D grid over rows and column blocks
# task: builtin/add
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_2d_kernel(x_ptr, y_ptr, z_ptr, rows, cols, sx, sy, sz, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    x = tl.load(x_ptr + r[:, None] * sx + c[None, :], mask=mask)
    y = tl.load(y_ptr + r[:, None] * sy + c[None, :], mask=mask)
    tl.store(z_ptr + r[:, None] * sz + c[None, :], x + y, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x, y = x.contiguous(), y.contiguous()
        rows, cols = x.shape
        z = torch.empty_like(x)
        grid = (triton.cdiv(rows, 16), triton.cdiv(cols, 64))
        add_2d_kernel[grid](x, y, z, rows, cols, x.stride(0), y.stride(0), z.stride(0), BLOCK_R=16, BLOCK_C=64)
        return z
