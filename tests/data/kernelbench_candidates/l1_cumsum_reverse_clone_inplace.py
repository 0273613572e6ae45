import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def reverse_cumsum_inplace_kernel(y_ptr, n_cols, BLOCK: tl.constexpr):
    """One program per row: the row is scanned from its end, a block at a time, in place. Each
    block is loaded back to front, so its inclusive scan is the suffix sum within the block."""
    row = tl.program_id(0).to(tl.int64)
    base = y_ptr + row * n_cols
    carry = 0.0
    n_blocks = tl.cdiv(n_cols, BLOCK)
    for i in range(0, n_blocks):
        end = n_cols - i * BLOCK  # this block covers [end - BLOCK, end), last element first
        offs = end - 1 - tl.arange(0, BLOCK)
        mask = offs >= 0
        x = tl.load(base + offs, mask=mask, other=0.0)
        suffix = tl.cumsum(x, axis=0) + carry
        tl.store(base + offs, suffix, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x):
        # copy the data with the scanned dimension last, then scan that copy in place
        out = x.movedim(self.dim, -1).clone(memory_format=torch.contiguous_format)
        n_cols = out.shape[-1]
        reverse_cumsum_inplace_kernel[(out.numel() // n_cols,)](out, n_cols, BLOCK=1024)
        return out.movedim(-1, self.dim)
