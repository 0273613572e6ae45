import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hardsigmoid_kernel(x_ptr, y_ptr, rows, cols, stride_row,
                       BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_r = tl.program_id(0)
    pid_c = tl.program_id(1)
    r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    offs = r[:, None].to(tl.int64) * stride_row + c[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.minimum(tl.maximum(x / 6.0 + 0.5, 0.0), 1.0)
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.contiguous().view(-1, x.shape[-1])
        y = torch.empty_like(x2)
        rows, cols = x2.shape
        grid = (triton.cdiv(rows, 16), triton.cdiv(cols, 256))
        hardsigmoid_kernel[grid](x2, y, rows, cols, x2.stride(0), BLOCK_R=16, BLOCK_C=256)
        return y.view(x.shape)
