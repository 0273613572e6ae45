import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_hardswish_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.maximum(tl.load(y_ptr + offs, mask=mask, other=0.0), 0.0)
    gate = tl.minimum(tl.maximum((y + 3.0) / 6.0, 0.0), 1.0)
    tl.store(y_ptr + offs, y * gate, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x)
        n = y.numel()
        relu_hardswish_kernel[(triton.cdiv(n, 2048),)](y, n, BLOCK=2048)
        return y
