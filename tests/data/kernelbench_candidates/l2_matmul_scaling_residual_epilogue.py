import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def scale_residual_kernel(h_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    h = tl.load(h_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, h * scale + h, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        h = F.linear(x, self.matmul.weight, self.matmul.bias)
        y = torch.empty_like(h)
        n = h.numel()
        scale_residual_kernel[(triton.cdiv(n, 2048),)](h, y, n, self.scaling_factor, BLOCK=2048)
        return y
