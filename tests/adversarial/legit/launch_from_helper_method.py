# class: kernel launched from a helper method
# task: builtin/relu
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def _launch(self, x: torch.Tensor, y: torch.Tensor) -> None:
        n = x.numel()
        relu_kernel[(triton.cdiv(n, self.block),)](x, y, n, BLOCK=self.block)

    def __init__(self):
        super().__init__()
        self.block = 256

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        self._launch(x, y)
        return y
