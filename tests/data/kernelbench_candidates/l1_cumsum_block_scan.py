import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_rows_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    """Inclusive scan of one row: a block scan per tile plus the running total of earlier tiles."""
    row = tl.program_id(0).to(tl.int64)
    carry = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        scan = tl.cumsum(x, axis=0)
        tl.store(y_ptr + row * stride + cols, scan + carry, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        # the scan runs over the last dimension; another dim is moved there and back
        moved = x.movedim(self.dim, -1).contiguous()
        rows = moved.numel() // moved.shape[-1]
        flat = moved.view(rows, moved.shape[-1])
        out = torch.empty_like(flat)
        cumsum_rows_kernel[(rows,)](flat, out, flat.shape[1], flat.stride(0), BLOCK=1024)
        return out.view(moved.shape).movedim(-1, self.dim)
