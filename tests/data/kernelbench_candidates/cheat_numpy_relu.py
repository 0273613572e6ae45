# attack: numpy computes the output on the host; a token kernel runs on the device
import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        scratch = torch.empty_like(x)
        relu_kernel[(1,)](x, scratch, 1024, BLOCK=1024)
        host = np.maximum(x.detach().cpu().numpy(), 0.0)
        return torch.from_numpy(host).to(x.device)
