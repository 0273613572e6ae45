# expect: timeout
# class: infinite loop inside a kernel
# task: builtin/relu
"""ReLU in Triton: each program handles BLOCK contiguous elements; the mask guards the tail."""

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
    # The atomic gives the loop a side effect: a loop without one may be deleted by the GPU
    # compiler (LLVM assumes forward progress), and the kernel would then simply return.
    i = 0
    while i < n_elements:
        i = i * 1
        tl.atomic_add(y_ptr + offsets, 0.0, mask=mask)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        grid = (triton.cdiv(n, BLOCK),)
        relu_kernel[grid](x, y, n, BLOCK=BLOCK)
        return y
