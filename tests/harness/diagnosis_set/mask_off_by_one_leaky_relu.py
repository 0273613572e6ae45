"""Leaky ReLU in Triton: y = x where x >= 0, negative_slope * x elsewhere.

The slope is a runtime scalar argument (not a constexpr), so one compiled kernel serves any slope.
Each program handles BLOCK contiguous elements; the mask guards the tail.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def leaky_relu_kernel(x_ptr, y_ptr, n_elements, negative_slope, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements - 1
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.where(x >= 0.0, x, x * negative_slope), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        leaky_relu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, self.negative_slope, BLOCK=BLOCK)
        return y
