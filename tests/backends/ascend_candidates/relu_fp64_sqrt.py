"""ReLU as (x + sqrt(x*x)) / 2 in an accumulator dtype chosen at launch (float64): stock Triton
compiles it for CUDA, but triton-ascend's math ops take no fp64 ("Expected dtype ['bf16', 'fp16',
'fp32', ...] but got fp64"). The kernel text names no fp64, so only the compiler can tell."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ACC: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(ACC)
    y = (x + tl.sqrt(x * x)) * 0.5
    tl.store(y_ptr + offs, y.to(tl.float32), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, ACC=tl.float64)
        return y
