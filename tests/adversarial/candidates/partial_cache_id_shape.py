# expect: correctness:cached-output | correctness:mismatch
# class: caching
# task: tasks/relu_partial.py
# attack: a copy of the output cached by the input's id and shape, returned as a fresh clone (when a later trial's input gets a freed input's id, the stale copy is a mismatch)

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (id(x), tuple(x.shape))
        if key not in self.cache:
            y = torch.empty_like(x)
            n = x.numel()
            relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
            self.cache[key] = y.clone()
        scratch = torch.empty(1024, device=x.device)
        relu_kernel[(1,)](x, scratch, 1024, BLOCK=1024)
        return self.cache[key].clone()
