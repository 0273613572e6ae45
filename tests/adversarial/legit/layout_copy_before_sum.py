# class: a PyTorch layout copy (.contiguous() of a transposed view) before the Triton reduction
# task: builtin/sum_dim
# The reduced dimension is moved last and made contiguous by PyTorch (layout work, not the
# reference's computation); the kernel sums each contiguous row.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, R, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, R, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * R + offs, mask=offs < R, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = self.dim % x.dim()
        moved = x.movedim(dim, -1).contiguous()
        out_shape = moved.shape[:-1]
        rows = moved.numel() // moved.shape[-1]
        y = torch.empty(out_shape, device=x.device, dtype=x.dtype)
        row_sum_kernel[(rows,)](moved, y, moved.shape[-1], BLOCK=128)
        return y
