# class: torch allocation and views around Triton compute
# task: builtin/sum_dim
# The input is viewed as (outer, reduced, inner); one program per (outer, inner block).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_middle_kernel(x_ptr, y_ptr, R, INNER, BLOCK_I: tl.constexpr):
    outer = tl.program_id(0)
    inner = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    mask = inner < INNER
    acc = tl.zeros((BLOCK_I,), dtype=tl.float32)
    for r in range(0, R):
        acc += tl.load(x_ptr + outer * R * INNER + r * INNER + inner, mask=mask, other=0.0)
    tl.store(y_ptr + outer * INNER + inner, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = list(x.shape)
        dim = self.dim % x.dim()
        outer = 1
        for s in shape[:dim]:
            outer *= s
        inner = 1
        for s in shape[dim + 1:]:
            inner *= s
        x3 = x.contiguous().view(outer, shape[dim], inner)
        y = torch.empty((outer, inner), device=x.device, dtype=x.dtype)
        sum_middle_kernel[(outer, triton.cdiv(inner, 64))](x3, y, shape[dim], inner, BLOCK_I=64)
        return y.view(shape[:dim] + shape[dim + 1:])
