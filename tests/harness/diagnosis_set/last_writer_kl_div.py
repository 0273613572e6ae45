"""KL divergence with log-probability inputs and targets, batch mean, in Triton:
loss = (1 / BATCH) * sum_{i,j} exp(t[i, j]) * (t[i, j] - q[i, j]), a 0-d tensor.

Two kernels, for a deterministic result: `kl_partials_kernel` writes one partial sum per
BLOCK-wide slice of the flattened inputs (masked lanes are zeroed explicitly), then
`batch_mean_kernel` (one program) adds the partials in a fixed order and divides by BATCH.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kl_partials_kernel(log_q_ptr, log_t_ptr, partial_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    log_q = tl.load(log_q_ptr + offsets, mask=mask, other=0.0)
    log_t = tl.load(log_t_ptr + offsets, mask=mask, other=0.0)
    pointwise = tl.exp(log_t) * (log_t - log_q)
    tl.store(partial_ptr, tl.sum(tl.where(mask, pointwise, 0.0), axis=0))


@triton.jit
def batch_mean_kernel(partial_ptr, out_ptr, n_partials, batch, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offsets, mask=offsets < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / batch)


class ModelNew(nn.Module):
    def forward(self, log_q: torch.Tensor, log_t: torch.Tensor) -> torch.Tensor:
        log_q = log_q.contiguous()
        log_t = log_t.contiguous()
        n = log_q.numel()
        BLOCK = 4096
        n_partials = triton.cdiv(n, BLOCK)
        partials = torch.zeros(n_partials, dtype=torch.float32, device=log_q.device)
        loss = torch.empty((), dtype=log_q.dtype, device=log_q.device)
        kl_partials_kernel[(n_partials,)](log_q, log_t, partials, n, BLOCK=BLOCK)
        batch_mean_kernel[(1,)](partials, loss, n_partials, log_q.shape[0], BLOCK=1024)
        return loss
