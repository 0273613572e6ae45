# class: partial-policy fusion: the convolution stays in PyTorch without its bias; that bias, ReLU and the added bias are one Triton kernel
# task: tasks/conv_wide_relu_bias.py
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_relu_bias_kernel(y_ptr, conv_bias_ptr, bias_ptr, out_ptr, n, plane, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    channel = (offs // plane) % channels
    y = tl.load(y_ptr + offs, mask=mask)
    conv_bias = tl.load(conv_bias_ptr + channel, mask=mask)
    bias = tl.load(bias_ptr + channel, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(y + conv_bias, 0.0) + bias, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.conv2d(x, self.conv.weight).contiguous()  # the reference's convolution, its bias left out
        out = torch.empty_like(y)
        n = y.numel()
        plane = y.shape[2] * y.shape[3]
        bias_relu_bias_kernel[(triton.cdiv(n, 1024),)](y, self.conv.bias, self.bias, out, n, plane, y.shape[1],
                                                       BLOCK=1024)
        return out
