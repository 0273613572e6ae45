import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(x_ptr, mean_ptr, partial_ptr, n, CHUNK: tl.constexpr, BLOCK: tl.constexpr,
                       CENTERED: tl.constexpr):
    """Program (b, c) sums chunk c of sample b: x, or (x - mean_b)**2 when CENTERED."""
    b = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    chunks = tl.num_programs(1)
    base = x_ptr + b * n
    acc = tl.zeros([BLOCK], tl.float32)
    mean = 0.0
    if CENTERED:
        mean = tl.load(mean_ptr + b)
    for start in range(c * CHUNK, tl.minimum(n, (c + 1) * CHUNK), BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(base + offs, mask=mask, other=0.0)
        if CENTERED:
            d = tl.where(mask, x - mean, 0.0)
            acc += d * d
        else:
            acc += x
    tl.store(partial_ptr + b * chunks + c, tl.sum(acc, axis=0))


@triton.jit
def reduce_partials_kernel(partial_ptr, out_ptr, chunks, n, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    total = tl.sum(tl.load(partial_ptr + b * chunks + offs, mask=offs < chunks, other=0.0), axis=0)
    tl.store(out_ptr + b, total / n)


@triton.jit
def normalise_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, var_ptr, n, eps, BLOCK: tl.constexpr):
    s = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    mean = tl.load(mean_ptr + s)
    rstd = 1.0 / tl.sqrt(tl.load(var_ptr + s) + eps)
    x = tl.load(x_ptr + s * n + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    bias = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + s * n + offs, (x - mean) * rstd * w + bias, mask=mask)


class ModelNew(nn.Module):
    CHUNKS = 64

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)  # holds weight, bias and eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = self.ln.weight.numel()
        samples = x.numel() // n
        chunk = triton.cdiv(triton.cdiv(n, self.CHUNKS), 1024) * 1024
        chunks = triton.cdiv(n, chunk)
        partial = torch.empty(samples * chunks, device=x.device, dtype=torch.float32)
        mean = torch.empty(samples, device=x.device, dtype=torch.float32)
        var = torch.empty(samples, device=x.device, dtype=torch.float32)
        block_p = triton.next_power_of_2(chunks)
        partial_sum_kernel[(samples, chunks)](x, mean, partial, n, CHUNK=chunk, BLOCK=1024, CENTERED=False)
        reduce_partials_kernel[(samples,)](partial, mean, chunks, n, BLOCK=block_p)
        partial_sum_kernel[(samples, chunks)](x, mean, partial, n, CHUNK=chunk, BLOCK=1024, CENTERED=True)
        reduce_partials_kernel[(samples,)](partial, var, chunks, n, BLOCK=block_p)
        y = torch.empty_like(x)
        normalise_kernel[(samples, triton.cdiv(n, 1024))](x, y, self.ln.weight, self.ln.bias, mean, var, n,
                                                         self.ln.eps, BLOCK=1024)
        return y
