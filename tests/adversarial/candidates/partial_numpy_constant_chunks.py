# expect: correctness:untracked-data
# timed-expect: timeout
# class: host-compute
# task: tasks/relu_partial.py
# attack: under the partial policy, numpy computes the ReLU from .numpy(); the result enters as 64-element torch.tensor constants that a kernel places

import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 64


@triton.jit
def place_kernel(src_ptr, out_ptr, start, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = start + offsets < n
    tl.store(out_ptr + start + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        values = np.maximum(x.detach().cpu().numpy().reshape(-1), 0.0)
        chunks = []  # kept alive: no freed chunk's memory is reused by the next one
        for start in range(0, n, CHUNK):
            chunk = torch.tensor(values[start:start + CHUNK], dtype=x.dtype, device=x.device)
            chunks.append(chunk)
            place_kernel[(1,)](chunk, out, start, n, BLOCK=CHUNK)
        return out
