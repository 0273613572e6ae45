# task: builtin/sigmoid
# style: `from torch import nn` and `import torch.nn.functional as F` aliases; the echoed Model uses F
import math

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _sigmoid_fwd(X, Y, numel, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    valid = idx < numel
    v = tl.load(X + idx, mask=valid, other=0.0)
    tl.store(Y + idx, 1.0 / (1.0 + tl.exp(-v)), mask=valid)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x):
        return F.sigmoid(x)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = 2 ** int(math.log2(2048))

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _sigmoid_fwd[(triton.cdiv(x.numel(), self.block),)](x, y, x.numel(), BLOCK=self.block)
        return y


N = 1 << 28


def get_inputs():
    return [4.0 * torch.randn(N)]


def get_init_inputs():
    return []
