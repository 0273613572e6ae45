"""The comparison's per-element work fused into one pass per statistic set, for GPU tensors.

`compare.compare_tensor` and `compare.error_norms` compute their statistics in float64 chunks
with about twenty PyTorch operations per chunk, each a pass over memory; on a KernelBench output
of 1.6 G elements that was the largest part of the correctness stage (about 0.4 s per trial on an
H200). The kernels below read each input once and compute the same float64 quantities per block,
leaving one partial result per block that PyTorch reduces:

- `allclose_partials`: per block, the elements outside `isclose(c, r, atol, rtol, equal_nan=True)`
  or non-finite where the reference is finite, the non-finite ones alone, the largest finite
  |c − r| and the largest finite |c − r| / |r| over nonzero r (the statistics `compare_tensor`
  reports). The tolerance test is torch's: equal, or both NaN, or a finite |c − r| within
  atol + rtol·|r|.
- `norm_partials`: per block, over the elements where the float64 reference r is finite,
  ‖o − r‖², ‖r‖², ⟨o − r, r⟩ and the count of nonzero r (`compare.ErrorNorms`).

Counts are exact and maxima are order-free, so they equal the PyTorch path's; the sums differ
from it only by summation order. The harness launches these outside the candidate's recording
window, so they are never counted as the candidate's work.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _finite(x):
    return (x - x) == 0  # inf - inf and nan - x are NaN


@triton.jit
def _allclose_kernel(r_ptr, c_ptr, n, params_ptr, wrong_ptr, bad_ptr, max_abs_ptr, max_rel_ptr,
                     BLOCK_SIZE: tl.constexpr):
    # atol, rtol and the smallest normal float64 as float64 values (a Python float argument
    # would arrive as float32)
    atol, rtol, tiny = tl.load(params_ptr), tl.load(params_ptr + 1), tl.load(params_ptr + 2)
    block = tl.program_id(0)
    offsets = block.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    r = tl.load(r_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    c = tl.load(c_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    diff = tl.abs(c - r)
    finite_diff = _finite(diff)
    abs_r = tl.abs(r)
    close = (c == r) | ((c != c) & (r != r)) | (finite_diff & (diff <= atol + rtol * abs_r))
    bad = (~_finite(c)) & _finite(r) & mask
    wrong = (bad | ~close) & mask
    tl.store(wrong_ptr + block, tl.sum(wrong.to(tl.int64), axis=0))
    tl.store(bad_ptr + block, tl.sum(bad.to(tl.int64), axis=0))
    neg_inf = -float("inf")
    tl.store(max_abs_ptr + block, tl.max(tl.where(finite_diff & mask, diff, neg_inf), axis=0))
    rel = diff / tl.maximum(abs_r, tiny)
    tl.store(max_rel_ptr + block, tl.max(tl.where(_finite(rel) & (r != 0) & mask, rel, 0.0), axis=0))


@triton.jit
def _norms_kernel(o_ptr, r_ptr, n, num_ptr, den_ptr, cross_ptr, nonzero_ptr, BLOCK_SIZE: tl.constexpr):
    block = tl.program_id(0)
    offsets = block.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    r = tl.load(r_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    o = tl.load(o_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    finite = _finite(r) & mask
    r = tl.where(finite, r, 0.0)
    diff = tl.where(finite, o - r, 0.0)
    tl.store(num_ptr + block, tl.sum(diff * diff, axis=0))
    tl.store(den_ptr + block, tl.sum(r * r, axis=0))
    tl.store(cross_ptr + block, tl.sum(diff * r, axis=0))
    tl.store(nonzero_ptr + block, tl.sum((r != 0).to(tl.int64), axis=0))


def _flat(t: torch.Tensor) -> torch.Tensor:
    return t.detach().reshape(-1).contiguous()


def _blocks(n: int) -> int:
    return max(1, triton.cdiv(n, BLOCK))


def allclose_partials(ref: torch.Tensor, cand: torch.Tensor, atol: float, rtol: float
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per block of `BLOCK` elements of the flattened tensors: (wrong count, non-finite count,
    largest finite |c − r| or −inf, largest finite relative error over nonzero r or 0)."""
    r, c = _flat(ref), _flat(cand)
    n, blocks = r.numel(), _blocks(r.numel())
    wrong = torch.empty(blocks, dtype=torch.int64, device=r.device)
    bad = torch.empty_like(wrong)
    max_abs = torch.empty(blocks, dtype=torch.float64, device=r.device)
    max_rel = torch.empty_like(max_abs)
    params = torch.tensor([atol, rtol, torch.finfo(torch.float64).tiny], dtype=torch.float64, device=r.device)
    _allclose_kernel[(blocks,)](r, c, n, params, wrong, bad, max_abs, max_rel, BLOCK_SIZE=BLOCK)
    return wrong, bad, max_abs, max_rel


def norm_partials(out: torch.Tensor, ref64: torch.Tensor
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per block: ‖o − r‖², ‖r‖², ⟨o − r, r⟩ over finite r, and the count of nonzero r."""
    o, r = _flat(out), _flat(ref64)
    n, blocks = r.numel(), _blocks(r.numel())
    num = torch.empty(blocks, dtype=torch.float64, device=r.device)
    den, cross = torch.empty_like(num), torch.empty_like(num)
    nonzero = torch.empty(blocks, dtype=torch.int64, device=r.device)
    _norms_kernel[(blocks,)](o, r, n, num, den, cross, nonzero, BLOCK_SIZE=BLOCK)
    return num, den, cross, nonzero
