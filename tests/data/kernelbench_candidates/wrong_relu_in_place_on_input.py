# flaw: writes ReLU into the caller's input tensor and returns it
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_inplace_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(x_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        n = x.numel()
        relu_inplace_kernel[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)
        return x
