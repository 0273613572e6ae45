"""Exact GELU, scaling and clamping in one elementwise Triton kernel:
y = min(max(SCALE · ½ x (1 + erf(x / √2)), CLAMP_MIN), CLAMP_MAX).

The input is treated as a flat array: each program handles BLOCK contiguous elements and the mask
guards the tail, so one read and one write per element replace the reference's three passes.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

SCALE = 1.5
CLAMP_MIN = -0.1
CLAMP_MAX = 2.0


@triton.jit
def gelu_scale_clamp_kernel(x_ptr, y_ptr, n_elements, scale, lo, hi, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    y = tl.minimum(tl.maximum(g * scale, lo), hi)
    tl.store(y_ptr + offsets, y, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        grid = (triton.cdiv(n, BLOCK),)
        gelu_scale_clamp_kernel[grid](x, y, n, SCALE, CLAMP_MIN, CLAMP_MAX, BLOCK=BLOCK)
        return y
