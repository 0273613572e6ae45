"""3-D permute materialised in Triton: y[k, i, j] = x[i, j, k], i.e. x.permute(2, 0, 1).contiguous().

x: (D0, D1, D2) and y: (D2, D0, D1), both addressed through their strides. Grid
(D0, cdiv(D1, BLOCK_J), cdiv(D2, BLOCK_K)): each program loads a [BLOCK_J, BLOCK_K] tile of the
slice x[i] (contiguous along k) and writes it to y[:, i, :] as the transposed tile (contiguous
along j). Masks guard the tails of both j and k.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def permute3d_kernel(x_ptr, y_ptr, D1, D2,
                     stride_x0, stride_x1, stride_x2, stride_y0, stride_y1, stride_y2,
                     BLOCK_J: tl.constexpr, BLOCK_K: tl.constexpr):
    i = tl.program_id(0)
    offs_j = tl.program_id(1) * BLOCK_J + tl.arange(0, BLOCK_J)
    offs_k = tl.program_id(2) * BLOCK_K + tl.arange(0, BLOCK_K)
    mask = (offs_j[:, None] < D1) & (offs_k[None, :] < D2)
    tile = tl.load(x_ptr + i * stride_x0 + offs_j[:, None] * stride_x1 + offs_k[None, :] * stride_x2,
                   mask=mask, other=0.0)
    tl.store(y_ptr + i * stride_y1 + offs_j[:, None] * stride_y0 + offs_k[None, :] * stride_y2,
             tile, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        D0, D1, D2 = x.shape
        y = torch.empty((D2, D0, D1), dtype=x.dtype, device=x.device)
        BLOCK_J = min(triton.next_power_of_2(D1), 64)
        BLOCK_K = min(triton.next_power_of_2(D2), 64)
        grid = (D0, triton.cdiv(D1, BLOCK_J), triton.cdiv(D2, BLOCK_K))
        permute3d_kernel[grid](x, y, D1, D2, x.stride(0), x.stride(1), x.stride(2),
                               y.stride(0), y.stride(1), y.stride(2), BLOCK_J=BLOCK_J, BLOCK_K=BLOCK_K)
        return y
