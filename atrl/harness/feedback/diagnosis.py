"""Diagnose a wrong result from the shape of its error, so the feedback names the real cause.

After a correctness failure of the value kind (mismatch, NaN/Inf, precision, wide inputs) the
candidate's output is compared with the float64 reference once more, looking at *where* and *how*
it is wrong, in this order (the first that fits wins):

  race          the source stores to one address from every program without atomics
  scale         every element is the reference times one constant (a wrong divisor or scale)
  precision     a small relative error spread over most elements (TF32 tl.dot, fp16, bf16)
  boundary      the wrong elements sit in a tail, a head or at block boundaries (masks, grid size)
  state         the first call was right, a later one wrong (state kept across calls); after
                boundary, because an unwritten tail may hold the right values by chance
  layout        the right values at the wrong places: a permutation, a transposed output, or the
                output of the reference on a transposed input (strides, layout)
  nan-inf       NaN/Inf where the reference is finite (exp overflow, division by zero)
  distribution  wrong only on the wide-input trial, or only beyond an input value (x < 0, x ≥ T)
  unknown       none of these: the generic advice

Each `Diagnosis` has its class, the evidence (numbers), the fix and the id of the knowledge-base
entry that explains it. `diagnose` is a pure function of tensors and the candidate's source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from atrl.harness.feedback.diagnosis_record import Diagnosis
from atrl.harness.feedback.diagnosis_source import SourceFacts, source_facts
from atrl.harness.stages.compare import CONSTANT_FACTOR_MAX_UNEXPLAINED, as_tensor_list, error_norms

CAUSES: dict[str, str] = {
    "race": "a data race: several programs write the same address without atomics",
    "state": "state kept across calls: right on the first call, wrong on a later one",
    "boundary": "errors confined to a tail or block boundary (mask or grid size)",
    "layout": "the right values in the wrong places (strides, transposition, layout)",
    "nan-inf": "NaN/Inf produced where the reference is finite (overflow or division)",
    "distribution": "wrong only for some input values (the kernel assumes the get_inputs() distribution)",
    "precision": "a small relative error everywhere (computed in lower precision)",
    "scale": "every element is the reference times one constant factor (a wrong constant or divisor)",
    "unknown": "wrong values without a pattern the harness recognises",
    # a timeout's diagnosis (atrl.harness.feedback.timeouts)
    "preset": "the judged size is too large for the backend (the reference alone fills the limit)",
    "candidate": "the candidate is too slow or never finishes",
}

VALUE_FAILURES = frozenset({"correctness:mismatch", "correctness:nan", "correctness:precision",
                            "correctness:wide-inputs"})

# Largest relative error (norm-wise) still read as a precision loss rather than a wrong formula.
PRECISION_MAX_RELATIVE_ERROR = 3e-2
# Share of elements that must carry a visible error for it to count as "everywhere".
PRECISION_MIN_SPREAD = 0.5
# Share of a tail's (head's) positions that must be wrong for the errors to count as confined there.
TAIL_DENSITY = 0.7
# Share of wrong elements that must hold values found elsewhere in the expected output (layout).
ELSEWHERE_MIN_SHARE = 0.6
# Share of the inputs' range that may lie beyond a value threshold separating wrong from right.
DISTRIBUTION_MAX_REGION = 0.9
# Most wrong positions along a dim searched for a block period (a Python-level search).
MAX_PERIOD_POSITIONS = 100_000


@dataclass
class FailedCall:
    """One failing candidate call and what it is compared with. `inputs` are the case's inputs
    before any call; `reference_fn` runs the reference (task dtype) on other inputs;
    `first_call_right` says whether the candidate's first call ever (None: unknown) was right."""

    failure_class: str
    inputs: Sequence
    reference: object
    reference64: object
    candidate: object
    source: str
    atol: float
    rtol: float
    wide_scale: float | None = None
    first_call_right: bool | None = None
    reference_fn: Callable[[list], object] | None = None


@dataclass
class _Pair:
    ref: torch.Tensor  # float64
    cand: torch.Tensor  # float64
    wrong: torch.Tensor  # bool, same shape
    atol: float
    rtol: float


def wrong_elements(ref: torch.Tensor, cand: torch.Tensor, atol: float, rtol: float) -> torch.Tensor:
    """Elements outside atol/rtol, or non-finite where the reference is finite."""
    close = torch.isclose(cand, ref, atol=atol, rtol=rtol, equal_nan=True)
    return ~close | (~torch.isfinite(cand) & torch.isfinite(ref))


def _pair(call: FailedCall) -> _Pair | None:
    """The first output tensor that is wrong, as float64 tensors; None when no output is."""
    refs, cands = as_tensor_list(call.reference64), as_tensor_list(call.candidate)
    if refs is None or cands is None or len(refs) != len(cands):
        return None
    for ref, cand in zip(refs, cands, strict=True):
        if ref.shape != cand.shape or not cand.is_floating_point() or cand.numel() == 0:
            continue
        # on the output's own device: a GPU's full-size outputs are too large to move
        r, c = ref.detach().double(), cand.detach().double()
        wrong = wrong_elements(r, c, call.atol, call.rtol)
        # a precision failure, or a constant factor inside allclose, has no element outside it
        if bool(wrong.any()) or call.failure_class in ("correctness:precision", "correctness:mismatch"):
            return _Pair(r, c, wrong, call.atol, call.rtol)
    return None


def diagnose(call: FailedCall) -> Diagnosis | None:
    """The cause of a value failure (see the module docstring); None for other failure classes
    or when no output tensor can be compared."""
    if call.failure_class not in VALUE_FAILURES:
        return None
    pair = _pair(call)
    if pair is None:
        return None
    facts = source_facts(call.source)
    for check in (_race, _scale, _precision, _boundary, _state, _layout, _nan_inf, _distribution):
        found = check(call, pair, facts)
        if found is not None:
            return found
    return _unknown(pair)


# ---- the checks, in order -------------------------------------------------------------------

def _lines(numbers: list[int], limit: int = 3) -> str:
    shown = ", ".join(str(n) for n in numbers[:limit])
    return f"line{'s' if len(numbers) > 1 else ''} {shown}{'…' if len(numbers) > limit else ''}"


def _share(pair: _Pair) -> float:
    return int(pair.wrong.sum()) / pair.wrong.numel()


def _wrong(pair: _Pair) -> str:
    """How many elements are wrong, in words: "1 of 4000 elements (0.025%)"."""
    count, total = int(pair.wrong.sum()), pair.wrong.numel()
    return f"{count} of {total} elements ({100 * count / total:.3g}%)"


def _race(call: FailedCall, pair: _Pair, facts: SourceFacts) -> Diagnosis | None:
    if not facts.racy_stores:
        return None
    return Diagnosis(
        "race", "a data race: every program of the kernel stores to the same address, without atomics",
        f"tl.store at {_lines(facts.racy_stores)} has an address that does not depend on tl.program_id "
        f"while the kernel runs several programs; {_wrong(pair)} are wrong",
        "give each program its own output slot (partial sums indexed by program id, then a second pass), "
        "or combine with tl.atomic_add into a zeroed output",
        "fix-racy-reduction")


def _state(call: FailedCall, pair: _Pair, facts: SourceFacts) -> Diagnosis | None:
    if call.first_call_right is not True or call.wide_scale is not None:
        return None
    if _mostly_non_finite(pair):  # new inputs reached an overflow: the NaN/Inf check says where
        return None
    return Diagnosis(
        "state", "state kept across calls: the first call was right, a later call on new inputs is wrong",
        f"first call matched the reference; this call has {_wrong(pair)} wrong "
        f"(max abs error {_max_abs(pair):.3g})",
        "compute everything from the current inputs on every call: no results, buffers or flags kept "
        "on self or in globals between calls (zero accumulators inside forward)",
        "fix-state-across-calls")


def _mostly_non_finite(pair: _Pair) -> bool:
    """Whether at least half the wrong elements are NaN/Inf where the reference is finite."""
    bad = ~torch.isfinite(pair.cand) & torch.isfinite(pair.ref)
    return bool(bad.any()) and int(bad.sum()) >= 0.5 * int(pair.wrong.sum())


def _max_abs(pair: _Pair) -> float:
    diff = (pair.cand - pair.ref).abs()
    finite = diff[torch.isfinite(diff)]
    return float(finite.max()) if finite.numel() else float("inf")


def _confined_region(wrong: torch.Tensor) -> tuple[int, str, int] | None:
    """(dim, description, length) when the wrong elements occupy only a tail, a head or a periodic
    set of positions along some dimension; None when they are spread over every position of
    every dim. A tail (head) may hold a few accidentally right elements: unwritten memory can
    happen to hold the expected value, so `TAIL_DENSITY` of its positions must be wrong."""
    for dim in range(wrong.dim()):
        size = wrong.shape[dim]
        if size < 2:
            continue
        others = [d for d in range(wrong.dim()) if d != dim]
        hit = wrong.any(dim=others) if others else wrong
        where = hit.nonzero().flatten()
        count = where.numel()
        if not count or count == size:
            continue
        first, last = int(where[0]), int(where[-1])
        margin = max(1, size // 50)  # a tail leaves at least this much of the dim untouched
        if first >= margin and count >= TAIL_DENSITY * (size - first) and last >= size - 1 - size // 50:
            return dim, f"only positions {first}..{size - 1} of {size} along dim {dim} (the tail)", size - first
        if last <= size - 1 - margin and count >= TAIL_DENSITY * (last + 1) and first <= size // 50:
            return dim, f"only positions 0..{last} of {size} along dim {dim} (the head)", last + 1
        if count > MAX_PERIOD_POSITIONS:
            continue
        positions = where.tolist()
        period = _period(positions, size)
        if period is not None:
            offsets = sorted({p % period for p in positions})
            return dim, (f"only positions ≡ {offsets[:4]} mod {period} along dim {dim} of size {size} "
                         "(block boundaries)"), len(offsets)
    return None


def _period(positions: list[int], size: int) -> int | None:
    """A power-of-two block size P for which the wrong positions are exactly those with a few
    offsets mod P (at most P/8 of them), repeated in at least two blocks."""
    chosen = set(positions)
    period = 4
    while period * 2 <= size:
        offsets = {p % period for p in positions}
        if len(offsets) <= max(1, period // 8):
            expected = {p for p in range(size) if p % period in offsets}
            if expected == chosen and len({p // period for p in positions}) >= 2:
                return period
        period *= 2
    return None


def _boundary(call: FailedCall, pair: _Pair, facts: SourceFacts) -> Diagnosis | None:
    region = _confined_region(pair.wrong)
    wrong_values = pair.cand[pair.wrong]
    zeros = bool(wrong_values.numel()) and bool((wrong_values == 0).all())
    if region is None:
        # a masked reduction whose padded lanes read as 0: the wrong outputs are exactly 0.0
        if zeros and facts.masked_loads_without_other and _share(pair) < 0.5:
            return Diagnosis(
                "boundary", "masked-off lanes read as 0 and enter the result (no neutral other= on a masked load)",
                f"every wrong element ({_wrong(pair)}) is exactly 0.0; tl.load with mask= but no "
                f"other= at {_lines(facts.masked_loads_without_other)}",
                "give masked loads the neutral value of what follows: other=0.0 for sums, "
                "other=-float('inf') for max, other=float('inf') for min",
                "fix-tail-mask", "other")
        return None
    _, where, length = region
    unwritten = bool(wrong_values.numel()) and bool(torch.isnan(wrong_values).all())
    detail = "mask" if length <= 2 else "grid"
    what = ("never written (still the poisoned NaN): the grid does not cover them, or the store mask "
            "excludes them") if unwritten else "wrong or unwritten values there"
    return Diagnosis(
        "boundary", "errors confined to a tail or block boundary: a mask or the grid size is off",
        f"{_wrong(pair)} wrong, {where}; {what}",
        "cover every element: grid = triton.cdiv(n, BLOCK) per dimension, masks `offs < n` (not n - 1 "
        "or <=), and the tail of every loop masked with a neutral other=",
        "fix-tail-mask", detail)


def _close(a: torch.Tensor, b: torch.Tensor, pair: _Pair) -> bool:
    return a.shape == b.shape and bool(torch.isclose(a, b, atol=pair.atol, rtol=pair.rtol).all())


def _layout_probe(call: FailedCall, pair: _Pair) -> str | None:
    """The words for a transposition or permutation the output matches, else None."""
    ref, cand = pair.ref, pair.cand
    if bool(torch.isfinite(cand).all()):
        for i in range(ref.dim()):
            for j in range(i + 1, ref.dim()):
                if ref.shape[i] == ref.shape[j] and _close(cand, ref.transpose(i, j), pair):
                    return f"the output equals the expected output with dims {i} and {j} swapped"
        transposed = _transposed_input(call, pair)
        if transposed is not None:
            return transposed
        if _close(torch.sort(cand.flatten()).values, torch.sort(ref.flatten()).values, pair):
            return "the output holds exactly the expected values, permuted"
    return _found_elsewhere(ref.flatten(), cand.flatten(), pair)


def _transposed_input(call: FailedCall, pair: _Pair) -> str | None:
    """Whether the output is the reference's on one square input transposed (swapped strides)."""
    if call.reference_fn is None:
        return None
    for k, value in enumerate(call.inputs):
        if not isinstance(value, torch.Tensor) or value.dim() < 2 or value.shape[-1] != value.shape[-2]:
            continue
        probe = [v.clone() if isinstance(v, torch.Tensor) else v for v in call.inputs]
        probe[k] = value.transpose(-1, -2).contiguous()
        with torch.no_grad():
            outputs = as_tensor_list(call.reference_fn(probe))
        if outputs and _close(pair.cand, outputs[0].detach().double().to(pair.cand.device), pair):
            return f"the output equals the reference computed on input {k} transposed (its strides swapped)"
    return None


def _found_elsewhere(ref: torch.Tensor, cand: torch.Tensor, pair: _Pair) -> str | None:
    """Most wrong elements hold, bit for bit, values that the expected output has at another
    position (a copy through a wrong index); exact equality keeps a precision loss out."""
    wrong = pair.wrong.flatten()
    if int(wrong.sum()) < 4 or ref.numel() < 8:
        return None
    ordered = torch.sort(ref).values
    values = cand[wrong]
    finite = values[torch.isfinite(values)]
    if finite.numel() == 0:
        return None
    where = torch.searchsorted(ordered, finite).clamp(max=ordered.numel() - 1)
    share = int((ordered[where] == finite).sum()) / values.numel()
    # values that are legitimately common (0 after a ReLU) prove nothing
    distinct = torch.unique(finite).numel() / finite.numel()
    if share >= ELSEWHERE_MIN_SHARE and distinct > 0.5:
        return f"{share:.0%} of the wrong elements hold values the expected output has at other positions"
    return None


def _layout(call: FailedCall, pair: _Pair, facts: SourceFacts) -> Diagnosis | None:
    if _share(pair) < 0.05:
        return None
    found = _layout_probe(call, pair)
    if found is None:
        return None
    return Diagnosis(
        "layout", "the right values in the wrong places: a stride, axis order or transposition is wrong",
        f"{_wrong(pair)} wrong; {found}",
        "index every tensor through its own strides (x.stride(i), in the order of its dims) or call "
        ".contiguous() first; check which axis each program id and tl.arange walks",
        "fix-layout-strides")


def _quantile(values: torch.Tensor, q: float) -> float:
    """The q-quantile of `values` (torch.quantile refuses tensors above 16M elements)."""
    flat = values.flatten()
    return float(flat.kthvalue(max(1, min(flat.numel(), round(q * flat.numel())))).values)


def _same_shaped_input(call: FailedCall, shape: torch.Size) -> torch.Tensor | None:
    for value in call.inputs:
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.shape == shape:
            return value.detach().double()
    return None


def _nan_inf(call: FailedCall, pair: _Pair, facts: SourceFacts) -> Diagnosis | None:
    bad = ~torch.isfinite(pair.cand) & torch.isfinite(pair.ref)
    if not bool(bad.any()):
        return None
    if not _mostly_non_finite(pair):
        return None  # a few NaN among many wrong values: a symptom of another fault
    share = int(bad.sum()) / bad.numel()
    x = _same_shaped_input(call, pair.ref.shape)
    trial = f" on the wide-input trial (normal×{call.wide_scale:g})" if call.wide_scale is not None else ""
    if x is not None and share < 1.0:
        magnitude = x.abs()
        smallest = float(magnitude[bad].min())
        if smallest > _quantile(magnitude, 0.75):
            return Diagnosis(
                "nan-inf", "NaN/Inf from an overflow on large inputs (e.g. exp of a large argument)",
                f"{share:.1%} of elements are NaN/Inf{trial}, all where |x| ≥ {smallest:.3g}; exp at "
                f"{_lines(facts.exp_lines) if facts.exp_lines else 'no line'}",
                "use a numerically stable form: subtract the row max before exp, clamp the exp argument, "
                "or a formula that saturates (tanh/sigmoid via exp(-|x|))",
                "fix-nan", "exp-overflow")
    if share == 1.0 and facts.division_lines:
        return Diagnosis(
            "nan-inf", "NaN/Inf everywhere: a division by zero (or by a count that is 0)",
            f"every element is NaN/Inf{trial} while the reference is finite; divisions at "
            f"{_lines(facts.division_lines)}",
            "check every divisor: counts as floats of the true element count (not n // BLOCK), "
            "add eps under sqrt/rsqrt, and never divide by a masked-out 0",
            "fix-nan", "division")
    origin = ("exp at " + _lines(facts.exp_lines)) if facts.exp_lines else (
        "divisions at " + _lines(facts.division_lines) if facts.division_lines else "no exp or division in the kernels")
    return Diagnosis(
        "nan-inf", "NaN/Inf where the reference is finite (overflow, division by zero or log of ≤ 0)",
        f"{share:.1%} of elements are NaN/Inf{trial}; {origin}",
        "guard divisions and exp/log: max-subtraction before exp, eps in denominators, clamp arguments",
        "fix-nan")


def _value_threshold(x: torch.Tensor, wrong: torch.Tensor) -> str | None:
    """The words for a range of the input that holds the wrong elements ("x ≤ -0.01",
    "2 ≤ x ≤ 9.1", "|x| ≥ 9"): every wrong element lies in it, most elements in it are wrong
    (`TAIL_DENSITY`), and it holds well under all inputs (`DISTRIBUTION_MAX_REGION`)."""
    at_wrong = x[wrong]
    low, high, smallest = float(at_wrong.min()), float(at_wrong.max()), float(at_wrong.abs().min())
    everything = (float(x.min()), float(x.max()))
    if low <= everything[0] and high < 0:
        words = f"x ≤ {high:.3g}"
    elif high >= everything[1] and low > 0:
        words = f"x ≥ {low:.3g}"
    else:
        words = f"{low:.3g} ≤ x ≤ {high:.3g}"
    candidates = ((words, (x >= low) & (x <= high)), (f"|x| ≥ {smallest:.3g}", x.abs() >= smallest))
    for words, region in candidates:
        inside = int(region.sum())
        if inside < DISTRIBUTION_MAX_REGION * x.numel() and int(wrong.sum()) >= TAIL_DENSITY * inside:
            return words
    return None


def _distribution(call: FailedCall, pair: _Pair, facts: SourceFacts) -> Diagnosis | None:
    x = _same_shaped_input(call, pair.ref.shape)
    threshold = _value_threshold(x, pair.wrong) if x is not None and bool(pair.wrong.any()) else None
    trial = f" on the wide-input trial (normal×{call.wide_scale:g})" if call.wide_scale is not None else ""
    if threshold is not None and bool((x[pair.wrong] < 0).all()):
        return Diagnosis(
            "distribution", "wrong only where the input is negative: the kernel assumes non-negative inputs",
            f"{_wrong(pair)} wrong{trial}, exactly those with {threshold}",
            "implement the reference's math for negative values too (both branches of piecewise "
            "functions with tl.where, no dropped abs/max)",
            "fix-wide-inputs", "negative")
    if threshold is not None:
        return Diagnosis(
            "distribution", "wrong only beyond an input value: a shortcut valid for part of the input range",
            f"{_wrong(pair)} wrong{trial}, exactly those with {threshold}",
            "implement the reference's exact formula for every input value (no truncated ranges, thresholds "
            "or small-|x| approximations); test with inputs ×10 and of both signs",
            "fix-wide-inputs", "range")
    if call.wide_scale is not None:
        return Diagnosis(
            "distribution", "right on the get_inputs() draws but wrong on wider inputs",
            f"the task's own trials passed; on normal×{call.wide_scale:g} inputs {_wrong(pair)} "
            f"are wrong (max abs error {_max_abs(pair):.3g})",
            "do not assume the range or sign of get_inputs(): implement every branch of the reference and "
            "use numerically stable forms for large magnitudes",
            "fix-wide-inputs")
    return None


def _scale(call: FailedCall, pair: _Pair, facts: SourceFacts) -> Diagnosis | None:
    ref, cand = pair.ref, pair.cand
    if not bool(torch.isfinite(cand).all()) or not bool(torch.isfinite(ref).all()):
        return None
    norms = error_norms(cand, ref)
    if norms.unexplained >= CONSTANT_FACTOR_MAX_UNEXPLAINED:
        return None
    return Diagnosis("scale", "every element is the reference times one constant factor",
                     f"output = {norms.factor:.6g} × reference (relative error {norms.relative:.2g}; the factor "
                     f"leaves {norms.unexplained:.1%} of the error unexplained, {_share(pair):.0%} of elements "
                     f"outside atol/rtol)",
                     "check the constants against the reference: the divisor of a mean (n, not n - 1), a sum where "
                     "the reference averages (or the reverse), a missing or doubled scale (0.5, 1/sqrt(d), alpha)",
                     "fix-wrong-constant")


def _precision(call: FailedCall, pair: _Pair, facts: SourceFacts) -> Diagnosis | None:
    ref, cand = pair.ref, pair.cand
    if not bool(torch.isfinite(cand).all()):
        return None
    norm = float(torch.linalg.vector_norm(ref))
    relative = float(torch.linalg.vector_norm(cand - ref)) / norm if norm > 0 else float("inf")
    scale = float(ref.abs().mean()) or 1.0
    # exact zeros (a ReLU's, a mask's) stay exact at any precision: the spread counts the others
    nonzero = ref != 0
    visible = ((cand - ref).abs() > 1e-6 * (ref.abs() + scale)) & nonzero
    spread = int(visible.sum()) / max(1, int(nonzero.sum()))
    if relative > PRECISION_MAX_RELATIVE_ERROR or (spread < PRECISION_MIN_SPREAD and ref.numel() > 1):
        return None
    evidence = (f"relative error {relative:.2g} against float64, spread over {spread:.0%} of nonzero elements "
                f"({_share(pair):.0%} outside atol/rtol)")
    if facts.fp16_lines:
        return Diagnosis("precision", "precision downgrade: values are rounded to or accumulated in float16",
                         f"{evidence}; float16 at {_lines(facts.fp16_lines)}",
                         "keep loads, accumulators and arithmetic in float32 (tl.zeros(..., dtype=tl.float32)); "
                         "cast only the final store to the output dtype",
                         "fix-precision-fp16", "fp16")
    if facts.bf16_lines:
        return Diagnosis("precision", "precision downgrade: values are cast to bfloat16 (8 bits of mantissa)",
                         f"{evidence}; bfloat16 at {_lines(facts.bf16_lines)}",
                         "remove the bfloat16 casts: an fp32 task must be computed in fp32",
                         "fix-precision-bf16", "bf16")
    if facts.tf32_dots:
        return Diagnosis("precision", "precision downgrade: tl.dot on fp32 inputs runs in TF32 by default "
                         "(10-bit mantissa)",
                         f"{evidence}; tl.dot without input_precision=\"ieee\" at {_lines(facts.tf32_dots)}",
                         "pass input_precision=\"ieee\" to every tl.dot of an fp32 task (older Triton: "
                         "allow_tf32=False), or use a task that allows TF32",
                         "fix-precision-tf32", "tf32")
    return Diagnosis("precision", "precision loss: a small relative error everywhere (an approximation or a "
                     "lower-precision step)",
                     evidence,
                     "compute in float32 or wider with the reference's exact formula (erf GELU, exact exp/log, "
                     "blockwise sums), no fast-math approximations",
                     "fix-precision", "other")


def _unknown(pair: _Pair) -> Diagnosis:
    return Diagnosis(
        "unknown", "wrong values without a recognised pattern",
        f"{_wrong(pair)} wrong, max abs error {_max_abs(pair):.3g}",
        "check the formula against the reference (constants, reduced dimension, operand order), then "
        "the masks, strides and index arithmetic at the first mismatching index",
        "fix-mismatch")
