"""Stage 4 (correctness): run the reference and the candidate on fresh inputs and compare.

Per trial and input case: the reference runs on its own copy of the inputs, a float64 copy of
the reference on float64 inputs, then the candidate on another copy with Triton launches
counted. Before every candidate call the outputs it returned last time are filled with NaN and
the allocator is poisoned, so stale or uninitialised buffers fail. Inputs must be unchanged
afterwards, except where the reference updates its inputs in place (`reference_mutates_inputs`):
then the inputs after the call are part of the result, and the candidate's are compared with
the reference's like outputs (same tolerances, same float64 precision bound). The `trials`
regular trials draw from the task's `get_inputs()`; two more replace floating inputs with
standard-normal draws (×1, ×10), skipped where the reference is not finite on them, with atol
scaled by the output's magnitude. When the job's memory budget cannot hold the whole float64
copy, the float64 bound is computed in slices of the batch (`float64_slices`).

Where a `ProvenanceRule` is given, every candidate call is recorded (`atrl.harness.stages.provenance`)
and, once its values pass, judged for who computed the result under the compute policy. After
the first trial's first case the candidate is called once more on the same input tensors (same
objects, same storage and data pointers) rewritten in place with new values: an output cached by
pointer, id or shape is then stale and fails as `correctness:cached-output`.
"""

from __future__ import annotations

import copy
import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch import nn

from atrl.backends.base import Backend
from atrl.harness.feedback.diagnosis import VALUE_FAILURES, FailedCall, diagnose
from atrl.harness.sandbox.memory_limits import current_budget
from atrl.harness.stages.compare import (
    Mismatch,
    as_tensor_list,
    compare_inputs,
    compare_outputs,
    finite_square_sum,
    largest_input,
)
from atrl.harness.stages.float64_slices import sliced_precision
from atrl.harness.stages.inputs import (
    Inputs,
    copy_inputs,
    double_inputs,
    input_cases,
    inputs_equal,
    widen_inputs,
)
from atrl.harness.stages.launch_hook import count_launches
from atrl.harness.stages.loading import LoadedModels, seed_everything
from atrl.harness.stages.provenance import (
    ProvenanceRecorder,
    ProvenanceRule,
    Work,
    decide,
    poison,
    record_candidate_state,
    recording,
)
from atrl.harness.stages.trace import StageFailure, is_cuda_error, trim_exception
from atrl.harness.verdict import CorrectnessStats
from atrl.tasks.task import Task

WIDE_SCALES = (1.0, 10.0)


@dataclass
class TrialPlan:
    """One trial: its seed, its number and, for a wide trial, the scale of the normal draws (None:
    task inputs)."""

    seed: int
    wide_scale: float | None = None
    number: int = 1  # 1-based, among the regular trials

    @property
    def label(self) -> str:
        # never the seed itself: feedback reaches the agent, and the seeds decide every trial's inputs
        return f"wide-inputs normal×{self.wide_scale:g}" if self.wide_scale is not None else f"trial {self.number}"


@dataclass
class CandidateRunner:
    """Calls the candidate with stale-output poisoning and launch counting; with `record`, also
    records the call's provenance into `last_record`."""

    model: nn.Module
    backend: Backend
    candidate_file: str
    previous_outputs: list[torch.Tensor] = field(default_factory=list)
    record: bool = False
    last_record: ProvenanceRecorder | None = None
    # a copy of the very first call's output, to tell state kept across calls from other faults
    first_output: object = None
    calls: int = 0

    def poison_previous(self) -> None:
        for tensor in self.previous_outputs:
            poison(tensor)

    def __call__(self, inputs: Inputs, expected_sizes: list[int]) -> tuple[object, dict[str, int]]:
        """The candidate's output for `inputs` and the Triton launches it made (name → count)."""
        self.poison_previous()
        self.backend.poison_allocator(expected_sizes)
        if not self.record:
            with torch.no_grad(), count_launches() as launches:
                output = self.model(*inputs)
                self.backend.synchronize()
        else:
            with torch.no_grad(), count_launches() as launches, recording() as recorder:
                record_candidate_state(recorder, self.model, inputs)
                output = self.model(*inputs)
                self.backend.synchronize()
            recorder.finish(as_tensor_list(output) or [])
            self.last_record = recorder
        self.previous_outputs = as_tensor_list(output) or []
        if self.calls == 0:
            tensors = as_tensor_list(output)
            # a copy for the state diagnosis, but not at sizes where it would eat the memory budget
            if tensors is not None and sum(t.numel() * t.element_size() for t in tensors) <= FIRST_OUTPUT_COPY_LIMIT:
                copies = [t.detach().clone() for t in tensors]
                self.first_output = copies[0] if isinstance(output, torch.Tensor) else type(output)(copies)
        self.calls += 1
        return output, dict(launches)


FIRST_OUTPUT_COPY_LIMIT = 256 << 20  # bytes


@dataclass
class Call:
    """One side's call of forward: its inputs (as they are after the call) and its output."""

    inputs: Inputs
    output: object


def trial_plans(trials: int, seed: int) -> list[TrialPlan]:
    plans = [TrialPlan(seed=seed + 1 + t, number=t + 1) for t in range(trials)]
    plans += [TrialPlan(seed=seed + 1 + trials + i, wide_scale=s) for i, s in enumerate(WIDE_SCALES)]
    return plans


def output_scale(output, chunk: int | None = None) -> float:
    """max(1, root-mean-square of the output's finite floating values). A task's atol is set for
    the magnitudes its own inputs give; on wide inputs outputs grow (sums by √n, products by the
    scale squared), so the absolute tolerance of a wide trial grows with them."""
    squares, count = 0.0, 0
    for t in as_tensor_list(output) or []:
        if t.is_floating_point():
            tensor_squares, tensor_count = finite_square_sum(t, chunk)
            squares += tensor_squares
            count += tensor_count
    return max(1.0, (squares / count) ** 0.5) if count else 1.0


def _all_finite(output) -> bool:
    tensors = as_tensor_list(output) or []
    return all(bool(torch.isfinite(t).all()) for t in tensors if t.is_floating_point())


def _runtime_failure(exc: BaseException, candidate_file: str, label: str) -> StageFailure:
    if isinstance(exc, StageFailure):
        return exc
    if is_cuda_error(exc):
        raise exc
    trimmed = trim_exception(exc, candidate_file)
    return StageFailure("correctness:runtime-error", f"{label}: {trimmed.text()}", trimmed.line)


def reference64(reference: nn.Module) -> nn.Module:
    """A float64 copy of the reference model (floating parameters and buffers)."""
    return copy.deepcopy(reference).double()


def _call(model: nn.Module, inputs: Inputs) -> Call:
    """`model(*inputs)` without autograd, with the inputs it ran on."""
    with torch.no_grad():
        return Call(inputs, model(*inputs))


def _reference_call(model: nn.Module, inputs: Inputs, measure: bool) -> tuple[Call, Work]:
    """The reference's call, with the work of its PyTorch ops when `measure`."""
    if not measure:
        return _call(model, inputs), Work()
    with recording(verify_writes=False) as recorder:
        call = _call(model, inputs)
    return call, recorder.compute_work()


def _provenance_failure(runner: CandidateRunner, rule: ProvenanceRule | None, task: Task, candidate: Call,
                        reference_work: Work, stats: CorrectnessStats) -> Mismatch | None:
    """Who computed this call's result (None without a rule); records the Triton share in `stats`."""
    if rule is None or runner.last_record is None:
        return None
    roots = list(as_tensor_list(candidate.output) or [])
    if task.reference_mutates_inputs:  # the inputs it updated are results too; the others are only read
        roots += [t for t in candidate.inputs if isinstance(t, torch.Tensor) and runner.last_record.was_written(t)]
    failure, share = decide(runner.last_record, roots, rule, reference_work)
    stats.triton_share = share if stats.triton_share is None else min(stats.triton_share, share)
    return failure


def _rewrite_in_place(inputs: Inputs, values: Inputs) -> None:
    with torch.no_grad():
        for tensor, value in zip(inputs, values, strict=True):
            if isinstance(tensor, torch.Tensor):
                tensor.copy_(value)


_CACHE_CLASSES = {"correctness:mismatch", "correctness:nan", "correctness:precision", "correctness:no-triton-output"}


def run_trials(task: Task, models: LoadedModels, backend: Backend, runner: CandidateRunner, trials: int,
               seed: int, dtype: torch.dtype, stats: CorrectnessStats,
               on_case: Callable[[], None] = lambda: None, rule: ProvenanceRule | None = None,
               guard: Callable[[str], None] = lambda where: None) -> None:
    """Run every trial and case; fill `stats`; raise `StageFailure` at the first failure. Each side
    keeps the inputs it was called with, so in-place updates can be compared afterwards. With a
    `rule`, each call's provenance is judged too and the same-storage call is made. `guard(where)`
    runs after each candidate call, before its output is compared (`JudgeWorld.check`)."""
    atol, rtol = task.tolerances()
    bound = task.relative_error_bound()
    ref64_model = reference64(models.reference)
    budget = current_budget()
    sliced = budget is not None and budget.float64_sliced and not task.reference_mutates_inputs
    runner.record = rule is not None
    rewrite_pending = rule is not None
    part = _PartClock(stats, backend.device)
    for plan in trial_plans(trials, seed):
        with part("inputs"):
            seed_everything(plan.seed)
            cases = input_cases(models.task_module, task.multi_case, backend.device, dtype)
            if plan.wide_scale is not None:
                generator = torch.Generator(device=backend.device).manual_seed(plan.seed)
                cases = [widen_inputs(inputs, plan.wide_scale, generator) for inputs in cases]
        stats.trials += 1
        stats.wide_trials += plan.wide_scale is not None
        skipped = False
        for case_index, inputs in enumerate(cases):
            on_case()
            label = plan.label if len(cases) == 1 else f"{plan.label}, case {case_index}"
            with part("reference"):
                ref_call, reference_work = _reference_call(models.reference, copy_inputs(inputs), rule is not None)
            if plan.wide_scale is not None and not _all_finite(ref_call.output):
                stats.skipped.append(f"{plan.label}: the reference is not finite on these inputs")
                skipped = True
                break
            # a budget too small for the whole float64 copy: the bound is computed in slices below
            with part("float64"):
                ref64_call = Call(inputs, None) if sliced else _call(ref64_model, double_inputs(inputs))
            with part("candidate"):
                cand_inputs = copy_inputs(inputs)
                sizes = [t.numel() * t.element_size() for t in as_tensor_list(ref_call.output) or []]
                try:
                    cand_out, launches = runner(cand_inputs, sizes)
                except Exception as exc:  # the candidate's own error, reported trimmed
                    raise _runtime_failure(exc, models.candidate_file, label) from exc
                guard(label)
            with part("compare"):
                scale_source = ref_call if sliced else ref64_call
                trial_atol = atol if plan.wide_scale is None else atol * output_scale(scale_source.output)
                failure = check_trial(task, inputs, ref_call, ref64_call, Call(cand_inputs, cand_out), launches,
                                      trial_atol, rtol, bound, stats)
            if failure is None and sliced:
                with part("float64"):
                    failure = _sliced_bound(models, ref64_model, inputs, ref_call, cand_out, bound, trial_atol, rtol,
                                            stats, label)
            if failure is None:
                with part("provenance"):
                    failure = _provenance_failure(runner, rule, task, Call(cand_inputs, cand_out), reference_work,
                                                  stats)
            if failure is None and rewrite_pending:
                rewrite_pending = False
                # the first call passed: drop its inputs and reference results so that the second
                # call's draw and reference fit in the same footprint (at 8 GiB inputs they are
                # 24-40 GiB more, past a whole-device budget on an H200)
                del ref_call, ref64_call, reference_work, cand_out, scale_source
                inputs.clear()  # the loop's enumerate still holds this list
                inputs = cases[case_index] = None
                with part("same-storage"):
                    _same_storage_call(task, models, backend, runner, ref64_model, cand_inputs, plan, case_index,
                                       dtype, (trial_atol, rtol, bound), rule, stats, sliced, guard)
                continue
            if failure is not None:
                wide = plan.wide_scale is not None and failure.error_class in _WIDE_CLASSES
                if wide:
                    failure = Mismatch("correctness:wide-inputs",
                                       f"right on get_inputs() draws but wrong on {label}: {failure.message}")
                with part("diagnosis"):
                    diagnosis = _diagnose(failure.error_class, task, models, backend, runner, seed, dtype,
                                          (inputs, ref_call, ref64_call, cand_out), trial_atol, rtol, bound,
                                          plan.wide_scale, ref64_model)
                message = failure.message if wide else f"{label}: {failure.message}"
                raise StageFailure(failure.error_class, message, diagnosis=diagnosis)
        if not skipped:
            stats.passed += 1


class _PartClock:
    """`with part(name):` adds the block's wall seconds to `stats.seconds[name]`; on a GPU the
    device is synchronised at the block's end, so queued kernels count where they were launched.
    A block that raises is not counted (and not synchronised: a crashed kernel's error must surface
    where the candidate ran)."""

    def __init__(self, stats: CorrectnessStats, device: torch.device) -> None:
        self.stats = stats
        self.sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.sync()
        self.stats.seconds[name] = round(self.stats.seconds.get(name, 0.0) + time.perf_counter() - start, 4)


def _sliced_bound(models: LoadedModels, ref64_model: nn.Module, inputs: Inputs, ref_call: Call, cand_out,
                  bound: float, atol: float, rtol: float, stats: CorrectnessStats, label: str) -> Mismatch | None:
    """The float64 bound slice by slice (`float64_slices`); a skipped bound is recorded in `stats`."""
    failure, err, skipped = sliced_precision(models.reference, ref64_model, inputs, ref_call.output, cand_out,
                                             bound, atol, rtol)
    if skipped is not None and skipped not in stats.skipped:
        stats.skipped.append(skipped)
    if err is not None:
        stats.relative_error_vs_fp64 = max(stats.relative_error_vs_fp64 or 0.0, err)
    return failure


_WIDE_CLASSES = {"correctness:mismatch", "correctness:nan", "correctness:precision"}


def _same_storage_call(task: Task, models: LoadedModels, backend: Backend, runner: CandidateRunner,
                       ref64_model: nn.Module, cand_inputs: Inputs, plan: TrialPlan, case_index: int,
                       dtype: torch.dtype, tolerances: tuple[float, float, float], rule: ProvenanceRule | None,
                       stats: CorrectnessStats, sliced: bool = False,
                       guard: Callable[[str], None] = lambda where: None) -> None:
    """Call the candidate again on the very tensors of its last call, rewritten in place with a new
    draw; raises `StageFailure` when the output is stale (cached by pointer, id or shape). Under a
    budget too small for a whole float64 copy (`sliced`) the values are compared without the
    float64 bound: a stale output fails the comparison itself."""
    seed_everything(plan.seed + 7919)
    values = input_cases(models.task_module, task.multi_case, backend.device, dtype)[case_index]
    atol, rtol, bound = tolerances
    ref_call, reference_work = _reference_call(models.reference, copy_inputs(values), rule is not None)
    ref64_call = Call(values, None) if sliced else _call(ref64_model, double_inputs(values))
    # an in-place task returns its inputs: they are inputs again now, not stale outputs to poison
    input_storages = {t.untyped_storage().data_ptr() for t in cand_inputs if isinstance(t, torch.Tensor)}
    runner.previous_outputs = [t for t in runner.previous_outputs
                               if t.untyped_storage().data_ptr() not in input_storages]
    _rewrite_in_place(cand_inputs, values)
    sizes = [t.numel() * t.element_size() for t in as_tensor_list(ref_call.output) or []]
    label = "same input tensors rewritten in place"
    try:
        cand_out, launches = runner(cand_inputs, sizes)
    except Exception as exc:
        raise _runtime_failure(exc, models.candidate_file, label) from exc
    guard(label)
    candidate = Call(cand_inputs, cand_out)
    failure = check_trial(task, values, ref_call, ref64_call, candidate, launches, atol, rtol, bound, stats)
    if failure is None:
        failure = _provenance_failure(runner, rule, task, candidate, reference_work, stats)
    if failure is None:
        return
    if failure.error_class in _CACHE_CLASSES:
        raise StageFailure("correctness:cached-output",
                           "called again on the same input tensors (same objects and data_ptr) after rewriting their "
                           f"values in place, forward returned a stale result: {failure.message}")
    raise StageFailure(failure.error_class, f"{label}: {failure.message}")


def _diagnose(error_class: str, task: Task, models: LoadedModels, backend: Backend, runner: CandidateRunner,
              seed: int, dtype: torch.dtype, failed: tuple, atol: float, rtol: float, bound: float,
              wide_scale: float | None, ref64_model: nn.Module) -> dict | None:
    """The diagnosis of a value failure (see `atrl.harness.feedback.diagnosis`) as a dict, else None."""
    if error_class not in VALUE_FAILURES:
        return None
    inputs, ref_call, ref64_call, cand_out = failed
    sliced = ref64_call.output is None  # the budget held no whole float64 copy: no float64 probes either
    if sliced:
        ref64_call = ref_call
    with open(models.candidate_file, encoding="utf-8") as handle:
        source = handle.read()

    def reference_fn(probe: list) -> object:
        return _call(models.reference, probe).output

    try:
        first_right = None
        if wide_scale is None and not sliced:
            first_right = _first_call_right(task, models, backend, runner, seed, dtype, atol, rtol, bound,
                                            ref64_model)
        found = diagnose(FailedCall(error_class, inputs, ref_call.output, ref64_call.output, cand_out, source,
                                    atol, rtol, wide_scale, first_right, reference_fn))
    except (torch.OutOfMemoryError, MemoryError):
        # the diagnosis's float64 copies are the judge's, not the candidate's: the failure stands
        # undiagnosed rather than turning into the candidate's out-of-memory
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        return None
    return found.to_dict() if found is not None else None


def _first_call_right(task: Task, models: LoadedModels, backend: Backend, runner: CandidateRunner, seed: int,
                      dtype: torch.dtype, atol: float, rtol: float, bound: float,
                      ref64_model: nn.Module) -> bool | None:
    """Whether the candidate's first call (the compile stage's, on the inputs of `seed`) was
    right; None when it was not recorded."""
    if runner.first_output is None:
        return None
    seed_everything(seed)
    inputs = input_cases(models.task_module, task.multi_case, backend.device, dtype)[0]
    ref_call = _call(models.reference, copy_inputs(inputs))
    ref64_call = _call(ref64_model, double_inputs(inputs))
    failure, _ = compare_outputs(ref_call.output, runner.first_output, ref64_call.output, atol, rtol, bound,
                                 input_elements=largest_input(inputs))
    return failure is None


def check_trial(task: Task, inputs: Inputs, reference: Call, reference64: Call, candidate: Call,
                launches: dict[str, int], atol: float, rtol: float, bound: float,
                stats: CorrectnessStats) -> Mismatch | None:
    """The checks of one candidate call, in order: a launch, the outputs, then the inputs (see
    `check_inputs`). `inputs` are the case's inputs before any call; records error statistics
    in `stats`."""
    if as_tensor_list(candidate.output) is not None and not launches:
        return Mismatch("correctness:no-launch",
                        "no Triton kernel was launched during forward (a kernel that never runs is a decoy)")
    failure, errors = compare_outputs(reference.output, candidate.output, reference64.output, atol, rtol, bound,
                                      input_elements=largest_input(inputs))
    _record(stats, errors)
    if failure is not None:
        return failure
    return check_inputs(task, inputs, reference, reference64, candidate, atol, rtol, bound, stats)


def check_inputs(task: Task, inputs: Inputs, reference: Call, reference64: Call, candidate: Call,
                 atol: float, rtol: float, bound: float, stats: CorrectnessStats) -> Mismatch | None:
    """The candidate's inputs after its call: bitwise unchanged, or, where the reference updates
    its inputs in place, equal to the reference's inputs after its call within the output
    tolerances and precision bound (non-tensor inputs cannot change and are skipped)."""
    if not task.reference_mutates_inputs:
        if inputs_equal(inputs, candidate.inputs):
            return None
        return Mismatch("correctness:input-mutation",
                        "forward modified its input tensors (write results to a new output tensor)")
    failure, errors = compare_inputs(reference.inputs, candidate.inputs, reference64.inputs, atol, rtol, bound)
    _record(stats, errors)
    if failure is None:
        return None
    return Mismatch("correctness:input-mutation",
                    "the reference updates its inputs in place, so their values after forward are part of the "
                    "result; after your forward they differ from the reference's (write the in-place result "
                    f"into the input tensors themselves): {failure.message}", failure.stats)


def _record(stats: CorrectnessStats, errors) -> None:
    stats.max_abs_error = max(stats.max_abs_error or 0.0, errors.max_abs_error)
    stats.max_rel_error = max(stats.max_rel_error or 0.0, errors.max_rel_error)
    stats.mismatch_fraction = max(stats.mismatch_fraction or 0.0, errors.mismatch_fraction)
    if stats.first_mismatch_index is None:
        stats.first_mismatch_index = errors.first_mismatch_index
    if errors.relative_error_vs_fp64 is not None:
        stats.relative_error_vs_fp64 = max(stats.relative_error_vs_fp64 or 0.0, errors.relative_error_vs_fp64)
