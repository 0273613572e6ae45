# class: an autotuner config's pre_hook zeroes the output; the kernel accumulates into it atomically
# task: builtin/relu
# an autotuner config's pre_hook zeroes the output (PyTorch allocation work inside the launch), then the kernel accumulates into it

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _zero_output(nargs):
    nargs["y_ptr"].zero_()


@triton.autotune(configs=[triton.Config({"BLOCK": 512}, pre_hook=_zero_output),
                          triton.Config({"BLOCK": 1024}, pre_hook=_zero_output)], key=["n"])
@triton.jit
def relu_accumulate_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.atomic_add(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_accumulate_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        return y
