"""The float64 precision bound computed in slices, for tasks whose whole float64 copy does not fit.

The float64 reference runs on `FLOAT64_SLICES` consecutive slices of the leading (batch)
dimension, one at a time; the squared error norms of each slice are summed, so the relative
errors equal those of the whole tensors. Slicing is valid only where the reference treats the
rows of its batch independently: every tensor input and output must share the leading size, and
the task-dtype reference on the first slice must reproduce the first rows of its whole output
(within the task's tolerances). Otherwise the bound is not computed for that trial, and the
trial records why (`CorrectnessStats.skipped`); the allclose checks still run in full.
"""

from __future__ import annotations

import torch
from torch import nn

from atrl.harness.sandbox.footprint import FLOAT64_SLICES
from atrl.harness.stages.compare import (
    ErrorNorms,
    Mismatch,
    accumulation_allowance,
    as_tensor_list,
    error_norms,
    largest_input,
    precision_failure,
)
from atrl.harness.stages.inputs import Inputs, double_inputs


def _rows(inputs: Inputs, start: int, stop: int) -> Inputs:
    return [v[start:stop] if isinstance(v, torch.Tensor) else v for v in inputs]


def not_sliceable_reason(reference: nn.Module, inputs: Inputs, ref_output, atol: float, rtol: float,
                         step: int) -> str | None:
    """Why the reference cannot be evaluated slice by slice along dim 0, or None when it can."""
    refs = as_tensor_list(ref_output) or []
    tensors = [v for v in inputs if isinstance(v, torch.Tensor)] + refs
    if not refs or refs[0].dim() == 0 or any(t.dim() == 0 or t.shape[0] != refs[0].shape[0] for t in tensors):
        return "its inputs and outputs do not share a leading (batch) dimension"
    with torch.no_grad():
        part = as_tensor_list(reference(*_rows(inputs, 0, step))) or []
    if len(part) != len(refs) or not all(
            p.shape == r[:step].shape and torch.allclose(p, r[:step], atol=atol, rtol=rtol, equal_nan=True)
            for p, r in zip(part, refs, strict=True)):
        return "its rows are not independent (the first slice alone gives other values)"
    return None


def sliced_precision(reference: nn.Module, reference64: nn.Module, inputs: Inputs, ref_output, cand_output,
                     bound: float, atol: float, rtol: float,
                     slices: int = FLOAT64_SLICES) -> tuple[Mismatch | None, float | None, str | None]:
    """(precision failure or None, the worst relative error against float64, why the bound was not
    computed or None). `inputs` are the case's inputs as before any call."""
    refs, cands = as_tensor_list(ref_output) or [], as_tensor_list(cand_output) or []
    if not refs or len(refs) != len(cands):
        return None, None, "the output is not a tensor or a tuple of tensors"
    rows = refs[0].shape[0] if refs[0].dim() else 0
    step = max(1, -(-rows // slices))
    reason = not_sliceable_reason(reference, inputs, ref_output, atol, rtol, step)
    if reason is not None:
        return None, None, f"float64 bound not computed: the full float64 copy does not fit and {reason}"
    cand_norms = [ErrorNorms() for _ in refs]
    ref_norms = [ErrorNorms() for _ in refs]
    with torch.no_grad():
        for start in range(0, rows, step):
            out64 = as_tensor_list(reference64(*double_inputs(_rows(inputs, start, start + step)))) or []
            for i, (ref, cand, r64) in enumerate(zip(refs, cands, out64, strict=True)):
                if not (cand.is_floating_point() and r64.is_floating_point()):
                    continue
                cand_norms[i] += error_norms(cand[start:start + step], r64)
                ref_norms[i] += error_norms(ref[start:start + step], r64)
            del out64
    worst: float | None = None
    for i, ref in enumerate(refs):
        if not (cands[i].is_floating_point() and ref.is_floating_point()) or cands[i].numel() == 0:
            continue
        worst = max(worst or 0.0, cand_norms[i].relative)
        label = "output" if len(refs) == 1 else f"output[{i}]"
        accumulation = accumulation_allowance(ref.dtype, largest_input(inputs), ref.numel())
        failure = precision_failure(cand_norms[i], ref_norms[i].relative, bound, ref.dtype, label, accumulation)
        if failure is not None:
            return failure, worst, None
    return None, worst, None
