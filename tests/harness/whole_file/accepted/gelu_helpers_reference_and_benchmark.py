# task: builtin/gelu_tanh
# style: a `reference` helper, a benchmark that builds Model from get_init_inputs, a module-level constant and a single-quoted __main__ guard
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
BLOCK_SIZE = 1024


@triton.jit
def _tanh(u):
    e = tl.exp(-2.0 * tl.abs(u))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(u >= 0.0, t, -t)


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
    y = 0.5 * x * (1.0 + _tanh(u))
    tl.store(y_ptr + offs, y, mask=mask)


def launch_gelu(x, block=BLOCK_SIZE):
    out = torch.empty_like(x)
    gelu_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
    return out


class ModelNew(nn.Module):
    def forward(self, x):
        reference = x.contiguous()  # a local name, not the reference
        return launch_gelu(reference)


class Model(nn.Module):
    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def reference(x):
    return Model()(x)


N = 1 << 28


def get_inputs():
    return [3.0 * torch.randn(N)]


def get_init_inputs():
    return []


def benchmark(repeats=10):
    model = Model(*get_init_inputs())
    fast = ModelNew(*get_init_inputs())
    x = get_inputs()[0]
    start = time.perf_counter()
    for _ in range(repeats):
        fast(x)
    mid = time.perf_counter()
    for _ in range(repeats):
        model(x)
    print(f"speedup {(time.perf_counter() - mid) / (mid - start):.2f}x")
    print("max error", (reference(x) - fast(x)).abs().max().item())


if __name__ == '__main__':
    benchmark()
