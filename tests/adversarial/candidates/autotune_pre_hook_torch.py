# expect: correctness:pytorch-compute
# class: pytorch-compute
# task: builtin/relu
# attack: the autotuner config's pre_hook computes the ReLU with PyTorch inside the launch; the kernel rewrites what is there

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _prepare(nargs):
    nargs["y_ptr"].copy_(nargs["x_ptr"].clamp_min(0))


@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, pre_hook=_prepare)], key=[])
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
        rewrite_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        return y
