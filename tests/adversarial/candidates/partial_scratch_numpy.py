# expect: correctness:untracked-data
# class: host-compute
# task: tasks/relu_partial.py
# attack: a Triton kernel on scratch memory; numpy computes the output on the host

import torch
import torch.nn as nn
import triton
import triton.language as tl
import numpy as np


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scratch = torch.empty(1024, device=x.device)
        relu_kernel[(1,)](x, scratch, 1024, BLOCK=1024)
        host = np.maximum(x.detach().cpu().numpy(), 0.0)
        return torch.from_numpy(host).to(x.device)
