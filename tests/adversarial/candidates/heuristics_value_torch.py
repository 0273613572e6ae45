# expect: correctness:pytorch-compute
# class: pytorch-compute
# task: builtin/relu
# attack: a @triton.heuristics value function computes the ReLU with PyTorch inside the launch and returns a block size

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _block(args):
    args["y_ptr"].copy_(args["x_ptr"].clamp_min(0))
    return 1024


@triton.heuristics({"BLOCK": _block})
@triton.jit
def rewrite_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(y_ptr + offsets, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        rewrite_kernel[(triton.cdiv(n, 1024),)](x, y, n)
        return y
