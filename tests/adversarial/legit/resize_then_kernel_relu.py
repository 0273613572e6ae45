# class: the output allocated empty and grown with resize_ before the kernel writes it (partial policy)
# task: tasks/relu_partial.py
# (partial policy: the static rule reads resize_ as PyTorch compute) the output is allocated empty and grown with resize_ before the kernel writes it; a small tensor is read to the host with .tolist() for a launch parameter

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.maximum(tl.load(x_ptr + offsets, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = x.new_empty(0)
        y.resize_(x.shape)
        (n,) = torch.tensor([x.numel()], device=x.device).tolist()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
