# task: builtin/rms_norm
# style: `class ModelNew(Model)` over its own copy of Model: inherits the constructor (the weight), overrides forward with a kernel
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 65536
DIM = 4096


class Model(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_row, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * stride_row + cols, x * rstd * w, mask=mask)


class ModelNew(Model):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2d = x.contiguous().view(-1, dim)
        y = torch.empty_like(x2d)
        block = min(triton.next_power_of_2(dim), 1024)
        rms_norm_kernel[(x2d.shape[0],)](x2d, self.weight, y, dim, x2d.stride(0), self.eps, BLOCK=block)
        return y.view(x.shape)


def get_inputs():
    return [torch.randn(ROWS, DIM)]


def get_init_inputs():
    return [DIM, 1e-6]
