# class: tl.constexpr configuration flags
# task: builtin/add
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, n, EVEN: tl.constexpr, ALPHA: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        z = tl.load(x_ptr + offs) + ALPHA * tl.load(y_ptr + offs)
        tl.store(z_ptr + offs, z)
    else:
        mask = offs < n
        z = tl.load(x_ptr + offs, mask=mask) + ALPHA * tl.load(y_ptr + offs, mask=mask)
        tl.store(z_ptr + offs, z, mask=mask)


class ModelNew(nn.Module):
    BLOCK = 128

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x, y = x.contiguous(), y.contiguous()
        z = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, self.BLOCK),)](x, y, z, n, EVEN=n % self.BLOCK == 0, ALPHA=1.0, BLOCK=self.BLOCK)
        return z
