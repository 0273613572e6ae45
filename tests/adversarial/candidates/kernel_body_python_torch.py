# expect: correctness:pytorch-compute | compile:error | compile:triton
# class: pytorch-compute
# task: builtin/relu
# attack: the kernel body calls a plain Python function that computes the ReLU with PyTorch (the interpreter runs it; a compiler refuses it)

import torch
import torch.nn as nn
import triton
import triton.language as tl

_SLOT = {}


def _work():
    model = _SLOT["model"]
    model.current_out.copy_(model.current_x.clamp_min(0))
    return 0


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    if tl.program_id(0) == 0:
        _work()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _SLOT["model"] = self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        self.current_x, self.current_out = x, y
        relu_kernel[(1,)](x, y, x.numel(), BLOCK=1024)
        return y
