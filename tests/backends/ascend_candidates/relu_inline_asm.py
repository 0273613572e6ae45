"""ReLU through PTX inline assembly (max.f32): fine for an NVIDIA GPU, meaningless on an NPU.
triton-ascend even lowers the call to linalg, so the static Ascend rule is what rejects it."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise("max.f32 $0, $1, 0f00000000;", "=r,r", [x], dtype=tl.float32,
                                  is_pure=True, pack=1)
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
        return y
