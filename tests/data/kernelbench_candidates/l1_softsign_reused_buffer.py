import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softsign_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.abs(x)), mask=m)


class ModelNew(nn.Module):
    """Keeps its output buffer between calls; every call rewrites all of it."""

    def __init__(self):
        super().__init__()
        self._out = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        if self._out is None or self._out.shape != x.shape or self._out.device != x.device:
            self._out = torch.empty_like(x)
        n = x.numel()
        softsign_kernel[(triton.cdiv(n, 1024),)](x, self._out, n, BLOCK=1024)
        return self._out
