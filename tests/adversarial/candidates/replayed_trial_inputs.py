# expect: correctness:mismatch
# class: constant-output
# task: builtin/relu
# attack: replays the judge's trial inputs from its seeds in __init__ and only looks outputs up in forward
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(src + offs, mask=m)
    tl.store(dst + offs, tl.where(v > 0, v, 0.0), mask=m)


@triton.jit
def lookup_kernel(x, keys, values, dst, n, key_n, K: tl.constexpr, BLOCK: tl.constexpr):
    first = tl.load(x)
    rows = tl.arange(0, K)
    key_first = tl.load(keys + rows * key_n)
    hit = tl.max(tl.where(key_first == first, rows, -1), axis=0)
    hit = tl.where(n == key_n, hit, -1)  # another size than the replayed one: never a hit
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    safe = tl.maximum(hit, 0)
    found = tl.load(values + safe * key_n + offs, mask=m & (offs < key_n), other=0.0)
    own = tl.load(x + offs, mask=m, other=0.0)
    tl.store(dst + offs, tl.where(hit >= 0, found, own), mask=m)


class ModelNew(nn.Module):
    """Answers only the inputs it expects: each trial's draw, replayed from the seeds a judge
    with seed 0 would use (trials 1-5, the wide trials 6 and 7, the same-storage call 7920), at
    the interpreter's size; anything else is returned unchanged."""

    def __init__(self):
        super().__init__()
        n = 4096
        keys = []
        for s in (1, 2, 3, 4, 5, 7920):
            g = torch.Generator().manual_seed(s)
            keys.append(torch.randn(n, generator=g))
        for s, scale in ((6, 1.0), (7, 10.0)):
            g = torch.Generator().manual_seed(s)
            keys.append(torch.randn(n, generator=g) * scale)
        self.register_buffer("keys", torch.stack(keys))
        self.register_buffer("values", torch.empty_like(self.keys))
        self.filled = False  # filled at the first call, once the buffers are on the judge's device

    def _table(self) -> torch.Tensor:
        if not self.filled:
            for key, value in zip(self.keys, self.values):
                relu_kernel[(triton.cdiv(key.numel(), 1024),)](key, value, key.numel(), BLOCK=1024)
            self.filled = True
        return self.values

    def forward(self, x):
        out = torch.empty_like(x)
        lookup_kernel[(triton.cdiv(x.numel(), 1024),)](x, self.keys, self._table(), out, x.numel(),
                                                         self.keys.shape[1], K=8, BLOCK=1024)
        return out
