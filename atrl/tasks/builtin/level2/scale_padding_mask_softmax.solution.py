"""Scaled softmax with key padding in one Triton kernel, per row (b, h, i) of scores s (B, H, Q, K):
y[j] = exp(c·s_j − m) / Σ_{j' < L_b} exp(c·s_j' − m) for j < L_b and 0 otherwise,
m = max_{j < L_b} c·s_j, c = 1/√head_dim, L_b = lengths[b] ≥ 1.

One program per row, the whole row in one block (BLOCK ≥ K). The program finds its batch index from
the row number, reads that sequence's length, and loads −∞ for padded keys and for columns past K,
which then contribute exp(−∞) = 0 to the sum and come out as exact zeros.
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def padding_softmax_kernel(s_ptr, len_ptr, y_ptr, rows_per_batch, n_keys, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    length = tl.load(len_ptr + row // rows_per_batch)
    cols = tl.arange(0, BLOCK)
    keep = (cols < n_keys) & (cols < length)
    s = tl.load(s_ptr + row * n_keys + cols, mask=keep, other=float("-inf"))
    z = s * scale
    z = z - tl.max(z, axis=0)
    e = tl.exp(z)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * n_keys + cols, y, mask=cols < n_keys)


class ModelNew(nn.Module):
    def __init__(self, head_dim: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, scores: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        # rows are addressed as row * n_keys: contiguous storage
        scores = scores.contiguous()
        lengths = lengths.contiguous()
        batch, heads, queries, n_keys = scores.shape
        y = torch.empty_like(scores)
        padding_softmax_kernel[(batch * heads * queries,)](
            scores, lengths, y, heads * queries, n_keys, self.scale, BLOCK=triton.next_power_of_2(n_keys),
        )
        return y
