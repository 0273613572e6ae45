# class: a PyTorch copy of the input that an in-place Triton kernel then rewrites
# task: builtin/relu
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_inplace_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(y, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        n = y.numel()
        relu_inplace_kernel[(triton.cdiv(n, 1024),)](y, n, BLOCK=1024)
        return y
