# task: builtin/leaky_relu
# style: an echoed Model with a constructor argument, its own get_init_inputs with a different slope, and a __main__ guard with an else branch that runs on import
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


class Model(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, self.negative_slope)


@triton.jit
def leaky_relu_kernel(x_ptr, y_ptr, n_elements, slope, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.where(x >= 0.0, x, x * slope), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        leaky_relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), self.negative_slope, BLOCK=1024)
        return y


def get_inputs():
    return [torch.randn(1 << 28)]


def get_init_inputs():
    return [0.5]  # not the task's 0.01: the harness must use the task's own


if __name__ == "__main__":
    model = Model(*get_init_inputs())
    print(model(*get_inputs()))
else:
    KERNEL_BLOCK = 1024
