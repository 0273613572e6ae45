# task: builtin/softmax
# style: its own get_inputs gives the wrong shape (1-D, 3 elements) and get_init_inputs an argument ModelNew does not take: both must be ignored
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    running_max = float("-inf")
    total = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
        new_max = tl.maximum(running_max, tl.max(x, axis=0))
        total = total * tl.exp(running_max - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        running_max = new_max
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
        tl.store(y_ptr + row * stride + cols, tl.exp(x - running_max) / total, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        softmax_rows[(rows,)](x, y, cols, x.stride(0), BLOCK=min(triton.next_power_of_2(cols), 1024))
        return y


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(3)]


def get_init_inputs():
    return [123]
