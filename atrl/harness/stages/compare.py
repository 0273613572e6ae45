"""Compare one candidate output with the reference: structure, shape, dtype, NaN/Inf, allclose,
and the relative error against a float64 evaluation of the reference (precision downgrades).

Pure functions over tensors; each check returns a `Mismatch` (failure class + message +
statistics) or None.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import torch

from atrl.harness.sandbox.footprint import COMPARE_CHUNK_ELEMENTS, COMPARE_CHUNK_ELEMENTS_CPU
from atrl.harness.stages.trace import is_cuda_error, is_out_of_memory

# Largest share of an error's norm a constant factor may leave unexplained for the error to read
# as a wrong constant (rounding noise leaves about all of it; k·r leaves only fp32 rounding).
CONSTANT_FACTOR_MAX_UNEXPLAINED = 0.1
# Fewest nonzero reference elements for that reading (one element fits any factor).
CONSTANT_FACTOR_MIN_ELEMENTS = 16
# A faithful reduction of K terms per output element, accumulated in the task dtype in any order
# (atomics, split-K, per-lane partial sums), errs like a random walk of roundings: about
# eps * sqrt(K / lanes) / 3 with >= 64 lanes, eps * sqrt(K) / 24. The allowance is three times
# that. At K = 2^28 (builtin mse_loss on CUDA) it is 2.4e-4: atomics of 1024-element partial sums
# measured 1.02e-5 there, over the fixed fp32 bound of 1e-5. At K <= 2^18 it stays below 1e-5.
# What it lets through: little that the fixed bound caught. fp16 partial sums of 1024-element blocks
# of an MSE over 2^24 terms erred 1.7e-6 on the CPU, under 1e-5 already (their errors average out).
ACCUMULATION_ALLOWANCE_DIVISOR = 8


@dataclass
class Mismatch:
    """Why an output is wrong: a FAILURE_CLASSES key, a message, and the error statistics."""

    error_class: str
    message: str
    stats: dict = field(default_factory=dict)


@dataclass
class OutputErrors:
    """Error statistics of a passing or failing comparison (worst output of a tuple)."""

    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    mismatch_fraction: float = 0.0
    first_mismatch_index: list[int] | None = None
    relative_error_vs_fp64: float | None = None


def as_tensor_list(output) -> list[torch.Tensor] | None:
    """A forward's output as a list of tensors (a tensor, or a tuple/list of tensors), else None."""
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in output):
        return list(output)
    return None


def check_structure(reference, candidate) -> Mismatch | None:
    """Same kind of output: a tensor for a tensor, a tuple of as many tensors for a tuple."""
    ref, cand = as_tensor_list(reference), as_tensor_list(candidate)
    if cand is None or ref is None or isinstance(reference, torch.Tensor) != isinstance(candidate, torch.Tensor):
        return Mismatch("correctness:output-type",
                        f"forward returned {_describe(candidate)}; the reference returns {_describe(reference)}")
    if len(ref) != len(cand):
        return Mismatch("correctness:output-type", f"forward returned {len(cand)} tensors; the reference returns {len(ref)}")
    return None


def _describe(output) -> str:
    if isinstance(output, torch.Tensor):
        return "a tensor"
    if isinstance(output, (tuple, list)):
        kinds = sorted({type(t).__name__ for t in output})
        return f"a {type(output).__name__} of {len(output)} ({', '.join(kinds)})"
    return f"a {type(output).__name__}"


def _index(flat_index: int, shape: torch.Size) -> list[int]:
    index = []
    for size in reversed(shape):
        index.append(flat_index % size)
        flat_index //= size
    return list(reversed(index))


def chunk_elements(chunk: int | None, device: torch.device) -> int:
    """`chunk`, or the comparison's chunk size for tensors on `device` (footprint module)."""
    if chunk is not None:
        return chunk
    return COMPARE_CHUNK_ELEMENTS_CPU if device.type == "cpu" else COMPARE_CHUNK_ELEMENTS


def _flat_chunks(*tensors: torch.Tensor, chunk: int | None):
    """(offset, float64 slices of each flattened tensor) for consecutive chunks of `chunk` elements
    (default: the size for their device), so a comparison never holds more than one chunk of
    float64 copies."""
    chunk = chunk_elements(chunk, tensors[0].device)
    flats = [t.detach().reshape(-1) for t in tensors]  # a view, unless a tensor is not contiguous
    for start in range(0, flats[0].numel(), chunk):
        yield start, [f[start:start + chunk].to(torch.float64) for f in flats]


def _chunk64(t: torch.Tensor, start: int, chunk: int) -> torch.Tensor:
    return t.detach().reshape(-1)[start:start + chunk].to(torch.float64)


def compare_tensor(ref: torch.Tensor, cand: torch.Tensor, atol: float, rtol: float,
                   name: str = "output", chunk: int | None = None) -> tuple[Mismatch | None, OutputErrors]:
    """Shape, dtype, NaN/Inf where the reference is finite, then allclose(atol, rtol). Computed in
    chunks of `chunk` elements (the statistics do not depend on it), with every statistic kept on
    the device until one read at the end: on a GPU each read is a synchronisation, and a
    KernelBench output has hundreds of chunks."""
    errors = OutputErrors()
    if tuple(cand.shape) != tuple(ref.shape):
        return Mismatch("correctness:shape", f"{name} shape {tuple(cand.shape)}, expected {tuple(ref.shape)}"), errors
    if cand.dtype != ref.dtype:
        return Mismatch("correctness:dtype", f"{name} dtype {cand.dtype}, expected {ref.dtype}"), errors
    if cand.numel() == 0:
        return None, errors
    count, bad_count, read_abs, read_rel, start, chunk = _allclose_statistics(ref, cand, atol, rtol, chunk)
    errors.max_abs_error = read_abs if read_abs != float("-inf") else float("inf")
    errors.max_rel_error = read_rel
    errors.mismatch_fraction = count / ref.numel()
    if not count:
        return None, errors
    # the first wrong element: one more pass over the first piece that has one
    r, c = _chunk64(ref, start, chunk), _chunk64(cand, start, chunk)
    wrong, _ = _wrong_elements(r, c, atol, rtol)
    at = int(wrong.to(torch.uint8).argmax())
    got, expected = torch.stack([c[at], r[at]]).tolist()
    errors.first_mismatch_index = _index(start + at, ref.shape)
    where = f"first at index {errors.first_mismatch_index}: got {got:.6g}, expected {expected:.6g}"
    if bad_count:
        share = bad_count / ref.numel()
        return Mismatch("correctness:nan",
                        f"{name} has NaN/Inf where the reference is finite ({share:.1%} of elements); {where}"), errors
    return Mismatch(
        "correctness:mismatch",
        f"{name} differs beyond atol={atol:g}, rtol={rtol:g}: max abs error {errors.max_abs_error:.3g}, "
        f"max rel error {errors.max_rel_error:.3g}, {errors.mismatch_fraction:.2%} of elements mismatched, {where}",
    ), errors


# Fewest elements for the fused kernels. Each fresh worker compiles them once (its Triton cache
# lives in its own HOME), which small comparisons need not pay; the threshold is a choice, not a
# measured break-even (the GPU side of compare_speed.py is to measure it).
FUSED_MIN_ELEMENTS = 1 << 24


_fused_failure: list[str] = []  # why the fused kernels could not run in this process, once known


def uses_fused_kernels(*tensors: torch.Tensor) -> bool:
    """Whether the comparison runs as fused Triton kernels (`compare_kernels`): on large CUDA
    tensors of real (not complex or boolean) dtypes, unless they failed to build in this process;
    elsewhere PyTorch's operations in float64 chunks."""
    return not _fused_failure and all(t.device.type == "cuda" and not t.is_complex() and t.dtype != torch.bool
                                      and t.numel() >= FUSED_MIN_ELEMENTS for t in tensors)


def _fused(name: str, *args):
    """`compare_kernels.<name>(*args)`, or None when the fused kernels cannot be built here (e.g.
    a Triton that rejects them): the comparison then takes the PyTorch path, same verdict."""
    try:
        from atrl.harness.stages import compare_kernels

        return getattr(compare_kernels, name)(*args)
    except Exception as exc:  # the judge's own kernel, never the candidate's: fall back, say why once
        if is_cuda_error(exc) or is_out_of_memory(exc):
            raise  # the device is broken or full: the verdict must say so
        _fused_failure.append(f"{type(exc).__name__}: {exc}"[:300])
        warnings.warn(f"fused comparison kernels unavailable, using PyTorch: {_fused_failure[0]}", stacklevel=2)
        return None


def _allclose_statistics(ref: torch.Tensor, cand: torch.Tensor, atol: float, rtol: float, chunk: int | None
                         ) -> tuple[int, int, float, float, int, int]:
    """(wrong elements, non-finite ones among them, largest finite |c − r| (−inf: none), largest
    finite relative error, start and length of the first piece with a wrong element), read from
    the device at once."""
    partials = _fused("allclose_partials", ref, cand, atol, rtol) if uses_fused_kernels(ref, cand) else None
    if partials is not None:
        from atrl.harness.stages.compare_kernels import BLOCK

        wrong, bad, max_abs, max_rel = partials
        first_block = (wrong > 0).to(torch.uint8).argmax()  # the first of equal maxima
        count, bad_count, first = torch.stack([wrong.sum(), bad.sum(), first_block]).tolist()
        read_abs, read_rel = torch.stack([max_abs.max(), max_rel.max()]).tolist()
        return count, bad_count, read_abs, read_rel, first * BLOCK, BLOCK
    chunk = chunk_elements(chunk, ref.device)
    inf = torch.tensor(float("inf"), dtype=torch.float64, device=ref.device)
    max_abs, max_rel = -inf, torch.zeros((), dtype=torch.float64, device=ref.device)
    wrong_counts, bad_counts = [], []
    for _, (r, c) in _flat_chunks(ref, cand, chunk=chunk):
        wrong, bad_values = _wrong_elements(r, c, atol, rtol)
        diff = (c - r).abs()
        max_abs = torch.maximum(max_abs, torch.where(torch.isfinite(diff), diff, -inf).max())
        rel = diff / r.abs().clamp_min(torch.finfo(torch.float64).tiny)
        max_rel = torch.maximum(max_rel, torch.where(torch.isfinite(rel) & (r != 0), rel, 0.0).max())
        wrong_counts.append(wrong.sum())
        bad_counts.append(bad_values.sum())
    counts = torch.stack(wrong_counts).tolist()
    read_abs, read_rel = torch.stack([max_abs, max_rel]).tolist()
    first = next((i for i, n in enumerate(counts) if n), 0)
    return sum(counts), int(sum(torch.stack(bad_counts).tolist())), read_abs, read_rel, first * chunk, chunk


def _wrong_elements(r: torch.Tensor, c: torch.Tensor, atol: float, rtol: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(outside allclose or non-finite where the reference is finite, the latter alone)."""
    bad_values = ~torch.isfinite(c) & torch.isfinite(r)
    return bad_values | ~torch.isclose(c, r, atol=atol, rtol=rtol, equal_nan=True), bad_values


@dataclass
class ErrorNorms:
    """Over the elements where the float64 reference r is finite: ‖o − r‖², ‖r‖² and ⟨o − r, r⟩
    for an output o, and how many of them are nonzero. They add up over slices, so a bound can be
    computed slice by slice."""

    error: float = 0.0
    reference: float = 0.0
    cross: float = 0.0
    nonzero: int = 0

    def __add__(self, other: ErrorNorms) -> ErrorNorms:
        return ErrorNorms(self.error + other.error, self.reference + other.reference, self.cross + other.cross,
                          self.nonzero + other.nonzero)

    @property
    def relative(self) -> float:
        return norms_ratio(self.error, self.reference)

    @property
    def factor(self) -> float:
        """The constant k for which k·r is closest to o (least squares)."""
        return 1.0 + self.cross / self.reference if self.reference > 0 else 1.0

    @property
    def unexplained(self) -> float:
        """The share of the error's norm that the constant factor leaves: near 0 when o = k·r at
        every element (a wrong constant), near 1 for rounding noise (a precision loss). 1 below
        `CONSTANT_FACTOR_MIN_ELEMENTS` nonzero elements, where any error fits some factor."""
        if self.error <= 0 or self.reference <= 0 or self.nonzero < CONSTANT_FACTOR_MIN_ELEMENTS:
            return 1.0
        return max(0.0, 1.0 - self.cross ** 2 / (self.error * self.reference)) ** 0.5


def error_norms(out: torch.Tensor, ref64: torch.Tensor, chunk: int | None = None) -> ErrorNorms:
    """`ErrorNorms` of `out` against `ref64`, in chunks, summed on the device and read once."""
    partials = _fused("norm_partials", out, ref64) if uses_fused_kernels(out, ref64) else None
    if partials is not None:
        num, den, cross, nonzero = torch.stack([part.sum().to(torch.float64) for part in partials]).tolist()
        return ErrorNorms(num, den, cross, int(nonzero))
    num = den = cross = nonzero = torch.zeros((), dtype=torch.float64, device=ref64.device)
    for _, (r, o) in _flat_chunks(ref64, out, chunk=chunk):
        finite = torch.isfinite(r)
        r = torch.where(finite, r, 0.0)
        diff = torch.where(finite, o - r, 0.0)
        num = num + diff.square().sum()
        den = den + r.square().sum()
        cross = cross + (diff * r).sum()
        nonzero = nonzero + (r != 0).sum()
    num, den, cross, nonzero = torch.stack([num, den, cross, nonzero]).tolist()
    return ErrorNorms(num, den, cross, int(nonzero))


def finite_square_sum(t: torch.Tensor, chunk: int | None = None) -> tuple[float, int]:
    """(sum of squares, count) over the finite elements of `t`, in float64 chunks: never a
    full-size copy or index tensor (a boolean mask over a KernelBench output of 1.9 G elements
    builds 56 GiB of indices)."""
    squares = torch.zeros((), dtype=torch.float64, device=t.device)
    count = torch.zeros((), dtype=torch.int64, device=t.device)
    for _, (values,) in _flat_chunks(t, chunk=chunk):
        finite = torch.isfinite(values)
        squares = squares + torch.where(finite, values, 0.0).square().sum()
        count = count + finite.sum()
    read_squares, read_count = torch.stack([squares, count.to(torch.float64)]).tolist()
    return read_squares, int(read_count)


def norms_ratio(num: float, den: float) -> float:
    """√num / √den of squared norms (the absolute norm when the reference is all zeros)."""
    return num ** 0.5 / den ** 0.5 if den > 0 else num ** 0.5


def relative_error(out: torch.Tensor, ref64: torch.Tensor, chunk: int | None = None) -> float:
    """‖out − ref64‖₂ / ‖ref64‖₂ over the elements where the float64 reference is finite
    (the absolute norm when the reference is all zeros)."""
    return error_norms(out, ref64, chunk).relative


def largest_input(inputs) -> int:
    """Elements of the largest floating-point tensor among `inputs` (0 when there is none)."""
    return max((t.numel() for t in inputs if isinstance(t, torch.Tensor) and t.is_floating_point()), default=0)


def accumulation_allowance(dtype: torch.dtype, input_elements: int, output_elements: int) -> float:
    """The relative error a faithful reduction may have from accumulating in `dtype`: with
    K = input_elements / output_elements terms per output element, eps * sqrt(K) / 8
    (`ACCUMULATION_ALLOWANCE_DIVISOR`); 0 when nothing is reduced. K overestimates a reduction
    only where an output is much smaller than an input without summing it (a slice, a gather),
    and would have to exceed 10^9 to hide an fp16 computation there."""
    if not dtype.is_floating_point or input_elements <= output_elements:
        return 0.0
    terms = input_elements / max(1, output_elements)
    return torch.finfo(dtype).eps * math.sqrt(terms) / ACCUMULATION_ALLOWANCE_DIVISOR


def check_precision(ref: torch.Tensor, cand: torch.Tensor, ref64: torch.Tensor, bound: float,
                    name: str = "output", input_elements: int = 0) -> tuple[Mismatch | None, float | None]:
    """Relative error of the candidate against the float64 reference within `bound`.

    The allowance grows to 8× the reference's own error when the reference, computed at the task
    dtype, is itself further than `bound` from float64 (an ill-conditioned task): a faithful
    kernel then errs as much as the reference, a lower-precision one far more. It grows too for
    long reductions (`accumulation_allowance`, from `input_elements`, the largest input's size)."""
    if not cand.is_floating_point() or not ref64.is_floating_point() or cand.numel() == 0:
        return None, None
    norms = error_norms(cand, ref64)
    accumulation = accumulation_allowance(ref.dtype, input_elements, ref.numel())
    return (precision_failure(norms, relative_error(ref, ref64), bound, ref.dtype, name, accumulation),
            norms.relative)


def precision_failure(norms: ErrorNorms, reference_err: float, bound: float, dtype: torch.dtype,
                      name: str = "output", accumulation: float = 0.0) -> Mismatch | None:
    """The precision check on error norms already computed (whole, or summed over slices): the
    candidate's `norms` and the task-dtype reference's own relative error `reference_err` against
    float64; `accumulation` is the allowance of a long reduction (`accumulation_allowance`). An
    error that is one constant factor at every element is a wrong constant (a mean divided by
    n − 1 is within KernelBench's tolerances at n = 4096), not a precision loss."""
    allowed = max(bound, 8 * reference_err, accumulation)
    err = norms.relative
    if err > allowed and norms.unexplained < CONSTANT_FACTOR_MAX_UNEXPLAINED:
        return Mismatch(
            "correctness:mismatch",
            f"{name} is the reference times {norms.factor:.6g} at every element (relative error {err:.3g}; "
            f"the constant factor explains all but {norms.unexplained:.1%} of the error, so this is not a "
            f"precision loss): a wrong constant, divisor or scale, e.g. a mean divided by n - 1",
        )
    if err > allowed:
        return Mismatch(
            "correctness:precision",
            f"precision downgrade: {name} has relative error {err:.3g} against a float64 reference, "
            f"above the bound {allowed:.3g} for {dtype} (computed in lower precision, e.g. fp16/bf16/TF32?)",
        )
    return None


def compare_outputs(reference, candidate, reference64, atol: float, rtol: float, bound: float,
                    name: str = "output", input_elements: int = 0) -> tuple[Mismatch | None, OutputErrors]:
    """All checks over every tensor of the output; the first failure, and the worst errors seen.
    `name` is what messages call the value ("output", or "input 0" for an input updated in place);
    `input_elements` the largest input's size (`largest_input`), for the precision allowance."""
    structure = check_structure(reference, candidate)
    if structure is not None:
        return structure, OutputErrors()
    refs, cands = as_tensor_list(reference), as_tensor_list(candidate)
    refs64 = as_tensor_list(reference64) if reference64 is not None else None
    worst = OutputErrors()
    for i, (ref, cand) in enumerate(zip(refs, cands, strict=True)):
        label = name if len(refs) == 1 else f"{name}[{i}]"
        failure, errors = compare_tensor(ref, cand, atol, rtol, label)
        _merge(worst, errors)
        if failure is not None:
            return failure, worst
        if refs64 is not None and i < len(refs64):
            failure, err = check_precision(ref, cand, refs64[i], bound, label, input_elements)
            if err is not None:
                worst.relative_error_vs_fp64 = max(worst.relative_error_vs_fp64 or 0.0, err)
            if failure is not None:
                return failure, worst
    return None, worst


def compare_inputs(reference: list, candidate: list, reference64: list | None, atol: float, rtol: float,
                   bound: float) -> tuple[Mismatch | None, OutputErrors]:
    """Inputs after a call that updates them in place: every tensor input checked like an output
    (named "input <position>"); other inputs cannot change and are skipped. The first failure,
    and the worst errors seen."""
    worst = OutputErrors()
    for position, (ref, cand) in enumerate(zip(reference, candidate, strict=True)):
        if not isinstance(ref, torch.Tensor):
            continue
        ref64 = reference64[position] if reference64 is not None else None
        failure, errors = compare_outputs(ref, cand, ref64, atol, rtol, bound, name=f"input {position}")
        _merge(worst, errors)
        if failure is not None:
            return failure, worst
    return None, worst


def _merge(worst: OutputErrors, errors: OutputErrors) -> None:
    """Fold one comparison's error statistics into the worst seen so far."""
    worst.max_abs_error = max(worst.max_abs_error, errors.max_abs_error)
    worst.max_rel_error = max(worst.max_rel_error, errors.max_rel_error)
    worst.mismatch_fraction = max(worst.mismatch_fraction, errors.mismatch_fraction)
    worst.first_mismatch_index = worst.first_mismatch_index or errors.first_mismatch_index
    if errors.relative_error_vs_fp64 is not None:
        worst.relative_error_vs_fp64 = max(worst.relative_error_vs_fp64 or 0.0, errors.relative_error_vs_fp64)
