# class: atomics into a zero-initialised buffer
# task: builtin/mse_loss
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sq_err_kernel(p_ptr, t_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(p_ptr + offs, mask=mask, other=0.0) - tl.load(t_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(acc_ptr, tl.sum(d * d, axis=0))


@triton.jit
def scale_kernel(acc_ptr, out_ptr, n):
    tl.store(out_ptr, tl.load(acc_ptr) / n)


class ModelNew(nn.Module):
    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        pred, target = pred.contiguous(), target.contiguous()
        n = pred.numel()
        acc = torch.zeros(1, device=pred.device, dtype=torch.float32)
        out = torch.empty((), device=pred.device, dtype=pred.dtype)
        sq_err_kernel[(triton.cdiv(n, 1024),)](pred, target, acc, n, BLOCK=1024)
        scale_kernel[(1,)](acc, out, n)
        return out
