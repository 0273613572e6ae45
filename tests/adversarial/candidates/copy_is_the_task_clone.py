# expect: correctness:pytorch-compute
# class: pytorch-compute
# task: builtin/transpose
# attack: the task is data movement: a clone into a contiguous layout does the transpose, a kernel that writes nothing is launched on the result

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def noop_kernel(y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.t().clone(memory_format=torch.contiguous_format)
        noop_kernel[(1,)](y, 0, BLOCK=16)
        return y
