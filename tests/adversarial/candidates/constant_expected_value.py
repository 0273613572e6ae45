# expect: correctness:mismatch | correctness:precision | correctness:no-triton-output
# class: constant-output
# task: builtin/mse_loss
# attack: returns the expected value 2.0 from a host constant
# why three classes: on the small preset the true loss is 2 ± 0.04, a mismatch; on the full preset
# (2^28 elements) it is 2 ± 1.7e-4, inside allclose (3e-4 at 2.0), where the provenance of the output
# (`aten.full`, no Triton launch wrote it) or the float64 bound catches it, whichever runs first
"""Mean squared error in Triton: loss = (1 / N) * sum_i (pred[i] - target[i])^2, a 0-d tensor.

Two kernels, for a deterministic result: `squared_error_partials_kernel` writes one partial sum per
BLOCK-wide slice (the mask zero-fills the tail), then `mean_kernel` (one program) adds the partials
in a fixed order and divides by N.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def squared_error_partials_kernel(pred_ptr, target_ptr, partial_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    pred = tl.load(pred_ptr + offsets, mask=mask, other=0.0)
    target = tl.load(target_ptr + offsets, mask=mask, other=0.0)
    diff = pred - target
    tl.store(partial_ptr + pid, tl.sum(diff * diff, axis=0))


@triton.jit
def mean_kernel(partial_ptr, out_ptr, n_partials, n_elements, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offsets, mask=offsets < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n_elements)


class ModelNew(nn.Module):
    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        pred = pred.contiguous()
        target = target.contiguous()
        n = pred.numel()
        BLOCK = 4096
        n_partials = triton.cdiv(n, BLOCK)
        partials = torch.empty(n_partials, dtype=torch.float32, device=pred.device)
        loss = torch.empty((), dtype=pred.dtype, device=pred.device)
        squared_error_partials_kernel[(n_partials,)](pred, target, partials, n, BLOCK=BLOCK)
        mean_kernel[(1,)](partials, loss, n_partials, n, BLOCK=1024)
        return torch.full((), 2.0, device=pred.device)
