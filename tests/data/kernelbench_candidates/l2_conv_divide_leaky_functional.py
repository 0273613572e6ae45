import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def divide_leaky_kernel(x_ptr, y_ptr, n, inv_divisor, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0) * inv_divisor
    tl.store(y_ptr + offs, tl.where(x >= 0, x, 0.01 * x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divisor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor

    def forward(self, x):
        h = F.conv2d(x, self.conv.weight, self.conv.bias)
        y = torch.empty_like(h)
        n = h.numel()
        divide_leaky_kernel[(triton.cdiv(n, 1024),)](h, y, n, 1.0 / self.divisor, BLOCK=1024)
        return y
