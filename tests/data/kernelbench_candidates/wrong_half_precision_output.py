# flaw: returns a float16 tensor for a float32 task
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sigmoid_half_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, (1.0 / (1.0 + tl.exp(-x))).to(tl.float16), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty(x.shape, device=x.device, dtype=torch.float16)
        n = x.numel()
        sigmoid_half_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
