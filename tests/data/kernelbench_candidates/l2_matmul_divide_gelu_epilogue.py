import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def divide_gelu_kernel(x_ptr, y_ptr, n, divisor, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0) / divisor
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        h = self.linear(x)
        y = torch.empty_like(h)
        n = h.numel()
        divide_gelu_kernel[(triton.cdiv(n, 1024),)](h, y, n, self.divisor, BLOCK=1024)
        return y
