# class: helper @triton.jit function
# task: builtin/relu
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _positive_part(v):
    return tl.where(v > 0, v, 0.0)


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, _positive_part(tl.load(x_ptr + offs, mask=mask)), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
        return y
