"""Stage 5 (profile, timed backends): how fast is the candidate against the eager reference.

Per input case: warm-up calls, then `timed_calls` CUDA-event timings of each side, alternating
reference and candidate (and which goes first), with the L2 cache flushed before every timed
call; medians in milliseconds, speedup = reference / candidate. Every timed call gets inputs of
its own: before each one, both sides' inputs are rewritten in place (untimed) as the case's
inputs times a scale of that call (1 + 2^-9 to 1 + 2^-8, drawn from the trial seed), so an
output cached by content (a checksum of the inputs) is never reused and the median times real
work. The outputs of `VERIFIED_CALLS` of those calls, chosen by the same seed, are compared with
the reference's of the same call (a cache keyed on something the scale leaves alone returns
another call's result). Before the last timed call the candidate's previous output is poisoned
and then the inputs are refilled in place with a fresh draw (in that order: an in-place task's
output is its input), and that call's output is checked too. Failures of these checks are
`correctness:timed-output`; where the reference updates its inputs in place, its inputs are
compared as well.
One extra candidate call under `torch.profiler` lists the device kernels and the share of device
time spent in the candidate's own Triton kernels (coverage; below the threshold it is flagged). Multi-case tasks report geometric
means over cases (so speedup is the geometric mean of the per-case speedups).
"""

from __future__ import annotations

import math
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from atrl.backends.base import Backend
from atrl.harness.stages.compare import Mismatch, compare_inputs, compare_outputs
from atrl.harness.stages.correctness import CandidateRunner
from atrl.harness.stages.inputs import Inputs, copy_inputs, input_cases
from atrl.harness.stages.loading import LoadedModels, seed_everything
from atrl.harness.stages.provenance import poison
from atrl.harness.stages.trace import StageFailure
from atrl.harness.verdict import Timing
from atrl.tasks.task import Task

SPEEDUP_REVIEW = 10.0
VERIFIED_CALLS = 3  # timed calls, besides the last, whose outputs are compared with the reference's


@dataclass
class ProfileSettings:
    timed_calls: int
    warmup_calls: int
    seed: int
    compile_baseline: bool
    coverage_threshold: float
    reference_mutates_inputs: bool = False


def _timings_ms(backend: Backend, fn: Callable[[], object], calls: int) -> list[float]:
    return [backend.time_call_ms(fn) for _ in range(calls)]


def _refill(dst: Inputs, src: Inputs, scale: float = 1.0) -> None:
    """`dst` rewritten in place from `src`, floating-point tensors times `scale`."""
    for d, s in zip(dst, src, strict=True):
        if isinstance(d, torch.Tensor):
            if scale != 1.0 and d.is_floating_point():
                torch.mul(s, scale, out=d)
            else:
                d.copy_(s)


def call_plan(seed: int, timed_calls: int) -> tuple[list[float], set[int]]:
    """Each timed call's input scale (the last call gets a fresh draw instead) and the calls
    whose outputs are verified, both from the trial seed, which the candidate cannot know."""
    generator = torch.Generator().manual_seed(seed + 20_011)
    scales = (1.0 + (1.0 + torch.rand(timed_calls, generator=generator, dtype=torch.float64)) * 2.0 ** -9).tolist()
    earlier = timed_calls - 1
    chosen = torch.randperm(earlier, generator=generator)[:VERIFIED_CALLS].tolist() if earlier > 0 else []
    return scales, set(chosen)


def profiled_kernels(backend: Backend, fn: Callable[[], object], triton_names: set[str]) -> list[dict]:
    """Device kernels of one call of `fn`: [{"name", "ms", "share", "triton"}], longest first."""
    from torch.profiler import ProfilerActivity, profile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's notice that events clear per cycle
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            backend.synchronize()
    totals: dict[str, float] = {}
    for event in prof.key_averages():
        us = getattr(event, "self_device_time_total", None)
        if us is None:
            us = getattr(event, "self_cuda_time_total", 0.0)
        if us and us > 0:
            totals[event.key] = totals.get(event.key, 0.0) + float(us)
    total = sum(totals.values())
    kernels = [
        {"name": name, "ms": us / 1000.0, "share": us / total if total else 0.0,
         "triton": any(name.startswith(n) for n in triton_names)}
        for name, us in totals.items()
    ]
    return sorted(kernels, key=lambda k: -k["ms"])


def _time_case(backend: Backend, models: LoadedModels, runner: CandidateRunner, inputs: Inputs,
               fresh: Inputs, settings: ProfileSettings, compiled: nn.Module | None,
               triton_names: set[str], atol: float, rtol: float, label: str,
               guard: Callable[[str], None]) -> dict:
    reference, candidate = models.reference, models.candidate
    ref_inputs, cand_inputs = copy_inputs(inputs), copy_inputs(inputs)
    last: list[object] = [None]
    ref_last: list[object] = [None]  # the reference's output, kept only for a verified call
    keep = [False]
    scales, verified = call_plan(settings.seed, settings.timed_calls)

    def run_reference() -> None:
        output = reference(*ref_inputs)
        if keep[0]:
            ref_last[0] = output

    def run_candidate() -> None:
        last[0] = candidate(*cand_inputs)

    with torch.no_grad():
        for _ in range(settings.warmup_calls):
            _refill(ref_inputs, inputs)
            _refill(cand_inputs, inputs)
            run_reference()
            run_candidate()
        backend.synchronize()
        ref_ms: list[float] = []
        cand_ms: list[float] = []
        for i in range(settings.timed_calls):
            if i == settings.timed_calls - 1:
                # poison first: an output that is an input (in-place tasks) then gets fresh values
                for tensor in runner.previous_outputs + [t for t in _tensors(last[0])]:
                    poison(tensor)
                _refill(ref_inputs, fresh)
                _refill(cand_inputs, fresh)
            else:
                _refill(ref_inputs, inputs, scales[i])
                _refill(cand_inputs, inputs, scales[i])
            backend.synchronize()
            keep[0] = i in verified
            if i % 2:
                cand_ms.append(backend.time_call_ms(run_candidate))
                ref_ms.append(backend.time_call_ms(run_reference))
            else:
                ref_ms.append(backend.time_call_ms(run_reference))
                cand_ms.append(backend.time_call_ms(run_candidate))
            if i in verified:
                guard(f"{label}, timed call {i + 1}")
                failure = _timed_call_failure(ref_last[0], last[0], ref_inputs, cand_inputs,
                                              settings.reference_mutates_inputs, atol, rtol)
                if failure is not None:
                    raise StageFailure("correctness:timed-output",
                                       f"{label}, timed call {i + 1} of {settings.timed_calls}: {failure.message} "
                                       "(a result cached across calls, or computed from other inputs than this "
                                       "call's)")
                ref_last[0] = None
        guard(f"{label}, last timed call")
        expected_inputs = copy_inputs(fresh)
        expected = reference(*expected_inputs)
        failure = _timed_call_failure(expected, last[0], expected_inputs, cand_inputs,
                                      settings.reference_mutates_inputs, atol, rtol)
        if failure is not None:
            raise StageFailure("correctness:timed-output", f"{label}, last timed call: {failure.message}")
        case = {"candidate_ms": statistics.median(cand_ms), "reference_ms": statistics.median(ref_ms)}
        if compiled is not None:
            for _ in range(settings.warmup_calls):
                compiled(*ref_inputs)
            case["compile_reference_ms"] = statistics.median(
                _timings_ms(backend, lambda: compiled(*ref_inputs), settings.timed_calls))
        started = time.perf_counter()
        case["kernels"] = profiled_kernels(backend, run_candidate, triton_names)
        case["coverage_seconds"] = time.perf_counter() - started
    case["speedup"] = case["reference_ms"] / case["candidate_ms"]
    return case


def _timed_call_failure(expected, output, expected_inputs: Inputs, cand_inputs: Inputs, mutates: bool,
                        atol: float, rtol: float) -> Mismatch | None:
    """The last timed call's output against the reference's on the same fresh inputs; where the
    reference updates its inputs in place, the candidate's inputs against the reference's too."""
    failure, _ = compare_outputs(expected, output, None, atol, rtol, math.inf)
    if failure is not None or not mutates:
        return failure
    return compare_inputs(expected_inputs, cand_inputs, None, atol, rtol, math.inf)[0]


def _tensors(output) -> list[torch.Tensor]:
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, (tuple, list)):
        return [t for t in output if isinstance(t, torch.Tensor)]
    return []


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(max(v, 1e-12)) for v in values) / len(values))


def profile_candidate(task: Task, models: LoadedModels, backend: Backend, runner: CandidateRunner,
                      settings: ProfileSettings, dtype: torch.dtype, triton_names: set[str],
                      guard: Callable[[str], None] = lambda where: None) -> tuple[Timing, list[str]]:
    """Time every case; returns the Timing and review flags. Raises StageFailure for a wrong
    timed output. Low coverage is a review flag: who computed the result was decided on the
    recorded data path during correctness, the same way on every backend. `guard(where)` runs
    before each comparison and after each case (`JudgeWorld.check`: the candidate's calls left
    the judge's own functions alone)."""
    atol, rtol = task.tolerances()
    compiled = torch.compile(models.reference) if settings.compile_baseline else None
    seed_everything(settings.seed)
    cases = input_cases(models.task_module, task.multi_case, backend.device, dtype)
    seed_everything(settings.seed + 10_007)
    fresh_cases = input_cases(models.task_module, task.multi_case, backend.device, dtype)
    results = []
    for index, (inputs, fresh) in enumerate(zip(cases, fresh_cases, strict=True)):
        label = "timing" if len(cases) == 1 else f"timing, case {index}"
        results.append(_time_case(backend, models, runner, inputs, fresh, settings, compiled,
                                  triton_names, atol, rtol, label, guard))
        guard(f"{label}, after its timed calls")
    kernels = _merge_kernels([k for case in results for k in case.pop("kernels")])
    coverage_seconds = sum(case.pop("coverage_seconds") for case in results)
    total = sum(k["ms"] for k in kernels)
    coverage = sum(k["ms"] for k in kernels if k["triton"]) / total if total > 0 else None
    timing = Timing(
        candidate_ms=_geomean([c["candidate_ms"] for c in results]),
        reference_ms=_geomean([c["reference_ms"] for c in results]),
        speedup=_geomean([c["speedup"] for c in results]),
        coverage=coverage,
        coverage_seconds=round(coverage_seconds, 4),
        kernels=kernels,
        cases=results if task.multi_case else [],
    )
    if compiled is not None:
        timing.compile_reference_ms = _geomean([c["compile_reference_ms"] for c in results])
        timing.speedup_vs_compile = timing.compile_reference_ms / timing.candidate_ms
    flags = []
    if timing.speedup > SPEEDUP_REVIEW:
        flags.append(f"speedup>10x: review ({timing.speedup:.1f}x)")
    if coverage is not None and coverage < settings.coverage_threshold:
        flags.append(f"low-coverage: only {coverage:.0%} of device time is in the candidate's Triton kernels "
                     f"(threshold {settings.coverage_threshold:.0%}); top: {_top(kernels)}")
    return timing, flags


def _merge_kernels(kernels: list[dict]) -> list[dict]:
    merged: dict[str, dict] = {}
    for k in kernels:
        entry = merged.setdefault(k["name"], {"name": k["name"], "ms": 0.0, "share": 0.0, "triton": k["triton"]})
        entry["ms"] += k["ms"]
    total = sum(e["ms"] for e in merged.values())
    for e in merged.values():
        e["share"] = e["ms"] / total if total else 0.0
    return sorted(merged.values(), key=lambda e: -e["ms"])


def _top(kernels: list[dict]) -> str:
    return ", ".join(f"{k['share']:.0%} in {k['name']}" for k in kernels[:3])
