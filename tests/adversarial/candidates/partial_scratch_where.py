# expect: correctness:low-triton-share
# class: pytorch-compute
# task: tasks/relu_partial.py
# attack: a Triton kernel writes the first block; torch.where computes the output

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        relu_kernel[(1,)](x, y, 1024, BLOCK=1024)
        return torch.where(x > 0, x, torch.zeros_like(x))
