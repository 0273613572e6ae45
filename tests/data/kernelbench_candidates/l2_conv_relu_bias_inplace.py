import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_bias_inplace_kernel(y_ptr, bias_ptr, n, hw, channels, BLOCK: tl.constexpr):
    """y <- relu(y) + bias[channel], in place on the convolution's output."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    channel = (offs // hw) % channels
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    b = tl.load(bias_ptr + channel, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(y, 0.0) + b, mask=mask)


class ModelNew(nn.Module):
    """The convolution stays in PyTorch (cuDNN); ReLU and the bias add are one Triton pass."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.conv(x).contiguous()
        n = y.numel()
        hw = y.shape[2] * y.shape[3]
        relu_bias_inplace_kernel[(triton.cdiv(n, 1024),)](y, self.bias, n, hw, y.shape[1], BLOCK=1024)
        return y
