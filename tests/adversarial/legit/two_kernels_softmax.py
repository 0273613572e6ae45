# class: several kernels
# task: builtin/softmax
# Row statistics (max, sum of exp) in one kernel, normalisation in a second one.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_stats_kernel(x_ptr, m_ptr, s_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
    m = tl.max(x, axis=0)
    tl.store(m_ptr + row, m)
    tl.store(s_ptr + row, tl.sum(tl.exp(x - m), axis=0))


@triton.jit
def normalise_kernel(x_ptr, m_ptr, s_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    m = tl.load(m_ptr + row)
    s = tl.load(s_ptr + row)
    tl.store(y_ptr + row * stride + cols, tl.exp(x - m) / s, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        m = torch.empty(rows, device=x.device, dtype=torch.float32)
        s = torch.empty(rows, device=x.device, dtype=torch.float32)
        y = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        row_stats_kernel[(rows,)](x, m, s, cols, x.stride(0), BLOCK=block)
        normalise_kernel[(rows,)](x, m, s, y, cols, x.stride(0), BLOCK=block)
        return y
