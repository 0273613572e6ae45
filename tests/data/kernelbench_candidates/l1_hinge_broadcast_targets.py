import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hinge_partial_kernel(p_ptr, t_ptr, partial_ptr, n_cols, BLOCK: tl.constexpr):
    """Row `r` of the (rows, cols) predictions; targets broadcast along the rows (index = column)."""
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        p = tl.load(p_ptr + row.to(tl.int64) * n_cols + cols, mask=mask, other=0.0)
        t = tl.load(t_ptr + cols, mask=mask, other=0.0)
        acc += tl.where(mask, tl.maximum(1.0 - p * t, 0.0), 0.0)
    tl.store(partial_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def mean_kernel(partial_ptr, out_ptr, n_partials, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        p = predictions.contiguous().view(-1, predictions.shape[-1])
        t = targets.contiguous()
        rows, cols = p.shape
        partial = torch.empty(rows, device=p.device, dtype=torch.float32)
        out = torch.empty((), device=p.device, dtype=torch.float32)
        hinge_partial_kernel[(rows,)](p, t, partial, cols, BLOCK=2048)
        mean_kernel[(1,)](partial, out, rows, rows * cols, BLOCK=1024)
        return out
