"""The in-worker judge: stages compile → correctness → profile for one candidate of one task.

`judge` runs inside a fresh worker process whose environment the pool already set from the
backend's `worker_env()`; `code` is already extracted and statically checked. It returns a
`Verdict` with stage, ok, error_class, message, line, correctness, timing, flags, versions and
stage_seconds filled; the pool fills score, feedback and the cache fields.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from atrl.harness.feedback.failures import RUNTIME_REWARD_HACKS
from atrl.harness.stages.trace import (
    StageFailure,
    is_cuda_error,
    is_out_of_memory,
    reference_blamed,
    trim_exception,
)
from atrl.harness.verdict import CorrectnessStats, Verdict
from atrl.tasks.task import Task


@dataclass
class JudgeOptions:
    """How to judge, resolved once by the caller (`Harness` builds it) and only passed along:
    backend name ("auto" | "cuda" | "interpreter"); size `preset` to judge at, the backend's
    default already filled in by the caller (None: the task as written); correctness `trials`;
    `timed_calls`/`warmup_calls` per side when timing; base `seed`; also time a `torch.compile`
    of the reference; `coverage_threshold` (under the
    `partial` policy, the least Triton share of the work, see `atrl.harness.stages.provenance`; on timed
    backends also the device-time coverage below which a run is flagged) and `compute_policy`
    ("strict" | "partial"; None: the task's own)."""

    backend: str
    preset: str | None
    trials: int = 5
    timed_calls: int = 100
    warmup_calls: int = 10
    seed: int = 0
    compile_baseline: bool = False
    coverage_threshold: float = 0.5
    compute_policy: str | None = None

    def policy_for(self, task: Task) -> str:
        """The compute policy `task` is judged under, by the static stage on the caller's side and by
        the provenance rule in the worker alike: this run's `compute_policy`, else the task's own."""
        return self.compute_policy or task.compute_policy


class _Clock:
    """Seconds spent per stage, and the current stage."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self.report = report
        self.seconds: dict[str, float] = {}
        self.stage = "compile"
        self._start = time.perf_counter()

    def enter(self, stage: str) -> None:
        self.close()
        self.stage = stage
        self.report(stage)

    def close(self) -> None:
        now = time.perf_counter()
        self.seconds[self.stage] = round(self.seconds.get(self.stage, 0.0) + now - self._start, 4)
        self._start = now


def judge(task: Task, code: str, options: JudgeOptions, report_stage: Callable[[str], None] = lambda s: None,
          timing_lock: AbstractContextManager = nullcontext()) -> Verdict:
    """Judge `code` for `task`; see the module docstring. Never raises for a candidate's fault."""
    if "triton" not in sys.modules:
        from atrl.backends import resolve_backend as _resolve

        os.environ.update(_resolve(options.backend).worker_env())
    from atrl.backends import resolve_backend

    backend = resolve_backend(options.backend)
    verdict = Verdict.failed(task.id, code, backend.name, backend.device_name(), "compile",
                             versions=backend.versions())
    clock = _Clock(report_stage)
    report_stage("compile")
    state: dict[str, str] = {}
    try:
        with backend.judging_context():
            _run_stages(task, code, options, backend, verdict, clock, timing_lock, state)
    except StageFailure as failure:
        # the stage that was running (a wrong timed output is found while profiling)
        verdict.stage = clock.stage
        verdict.error_class, verdict.message, verdict.line = failure.error_class, failure.message, failure.line
        verdict.reward_hack = failure.error_class in RUNTIME_REWARD_HACKS
        verdict.diagnosis = failure.diagnosis
    except Exception as exc:  # anything else: classify by what broke, never crash the worker silently
        _record_unexpected(verdict, exc, clock.stage, state.get("candidate_file"))
    clock.close()
    verdict.stage_seconds = clock.seconds
    verdict.flags.extend(backend.verdict_notes())
    return verdict


def _record_unexpected(verdict: Verdict, exc: BaseException, stage: str, candidate_file: str | None) -> None:
    trimmed = trim_exception(exc, candidate_file)
    verdict.stage = stage
    verdict.message, verdict.line = trimmed.text(), trimmed.line
    if is_cuda_error(exc):
        verdict.error_class = "cuda:error"
    elif is_out_of_memory(exc):
        verdict.error_class = "out-of-memory"
    elif stage == "profile":
        verdict.error_class = "profile:error"
    elif stage == "correctness":
        verdict.error_class = "correctness:runtime-error"
    else:
        verdict.error_class = "compile:error"


# A compile-stage error that names CUDA on a backend whose tensors live on the CPU (the interpreter,
# Ascend without an NPU) comes from code written for a GPU that the interpreter does not map
# (atrl.backends.cuda_on_cpu maps `device="cuda"`, `.cuda()`, `x.is_cuda` and a few torch.cuda calls):
# other `torch.cuda.*` calls, `x.device.type == "cuda"`.
CPU_DEVICE_HINT = ("This backend runs your kernels on the CPU (Triton's interpreter): the inputs are CPU tensors "
                   "standing in for CUDA tensors. device=\"cuda\", .cuda(), x.is_cuda, torch.cuda.is_available(), "
                   "torch.cuda.synchronize() and "
                   "torch.cuda.get_device_properties() work as on a GPU; other torch.cuda functions and checks of "
                   "x.device.type do not: allocate with device=x.device.")


def describe_inputs(inputs) -> str:
    """Shapes and dtypes of a case's inputs, e.g. "(48, 48) float32, (48, 48) float32, 3"."""
    import torch

    parts = [f"{tuple(v.shape)} {str(v.dtype).removeprefix('torch.')}" if isinstance(v, torch.Tensor) else repr(v)
             for v in inputs]
    return ", ".join(parts)[:200]


def _note_reference_time(report_stage: Callable, reference, inputs, preset: str | None, backend) -> list[int]:
    """Tell the pool the size judged and the reference's own time for one call at that size, so
    a timeout can say whether the candidate or the size is the cause (atrl.harness.feedback.timeouts).
    Returns the byte sizes of the reference's outputs, to poison the allocator for the
    candidate's first call: the memory of the freed reference output and inputs (filled with
    NaN here too) must not hand the candidate the right answer in buffers it never writes."""
    import torch

    from atrl.harness.stages.compare import as_tensor_list
    from atrl.harness.stages.inputs import copy_inputs
    from atrl.harness.stages.provenance import poison

    note = getattr(report_stage, "note", lambda **facts: None)
    input_bytes = sum(v.numel() * v.element_size() for v in inputs if isinstance(v, torch.Tensor))
    described = describe_inputs(inputs)
    note(preset=preset, default_preset=backend.default_preset, inputs=described, interpreted=not backend.timed,
         input_bytes=input_bytes, reference_running=True)
    copies = copy_inputs(inputs)
    start = time.perf_counter()
    with torch.no_grad(), reference_blamed(preset, described):
        outputs = as_tensor_list(reference(*copies)) or []
    backend.synchronize()
    note(reference_seconds=round(time.perf_counter() - start, 4))
    # the input copies too: for relu-like ops an input's memory already holds much of the answer
    for tensor in [*outputs, *(c for c in copies if isinstance(c, torch.Tensor))]:
        poison(tensor)
    return [t.numel() * t.element_size() for t in outputs]


def _run_stages(task: Task, code: str, options: JudgeOptions, backend, verdict: Verdict, clock: _Clock,
                timing_lock: AbstractContextManager, state: dict[str, str]) -> None:
    """Run the stages, filling `verdict`; raises StageFailure (or the error) at the first failure.
    `state["candidate_file"]` is set once the candidate is written, for trimming later errors."""
    import torch

    from atrl.harness.stages import launch_hook
    from atrl.harness.stages.correctness import CandidateRunner, run_trials
    from atrl.harness.stages.inputs import copy_inputs, input_cases
    from atrl.harness.stages.integrity import JudgeWorld
    from atrl.harness.stages.loading import (
        LoadedModels,
        build_models,
        classify_compile_error,
        import_candidate,
        load_task_module,
        seed_everything,
        torch_dtype,
        write_candidate,
    )
    from atrl.harness.stages.profile import ProfileSettings, profile_candidate
    from atrl.harness.stages.provenance import ProvenanceRule, install_host_read_hooks

    if backend.platform == "cuda":
        # TF32 off for both sides, in correctness as in timing: an fp32 task is judged in fp32.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    dtype = torch_dtype(task.dtype)
    preset = options.preset

    # stage: compile
    try:
        task_module = load_task_module(task, preset)
    except Exception as exc:  # a broken task, not the candidate: say so
        raise StageFailure("task:reference-error", f"the task's reference module failed to load: {exc!r}") from exc
    launch_hook.install()
    install_host_read_hooks()  # the recorder's wrappers, in place before the snapshot below
    backend.prepare_worker()
    candidate_file = write_candidate(code, verdict.candidate_hash)
    state["candidate_file"] = candidate_file
    kernel_names: set[str] = set()
    # what the judge relies on, before any candidate code runs: checked after each call into it
    world = JudgeWorld.snapshot(task_module, objects={"the task": task, "the judge's options": options})
    try:
        candidate_module = import_candidate(candidate_file)
        world.check("importing the candidate")
        kernel_names = launch_hook.jit_function_names(candidate_module)
        reference, candidate, init_inputs = build_models(task_module, candidate_module, options.seed, dtype,
                                                         backend.device, preset)
        world.check("building ModelNew")
        models = LoadedModels(task_module, candidate_module, candidate_file, reference, candidate, init_inputs)
        runner = CandidateRunner(candidate, backend, candidate_file)
        seed_everything(options.seed)
        with reference_blamed(preset):
            first = input_cases(task_module, task.multi_case, backend.device, dtype)[0]
        sizes = _note_reference_time(clock.report, reference, first, preset, backend)
        _, launches = runner(copy_inputs(first), sizes)
        world.check("in the first call")
        kernel_names |= set(launches)
    except StageFailure:
        raise
    except Exception as exc:  # the candidate's compile-stage error, classified and trimmed
        if is_cuda_error(exc) or is_out_of_memory(exc):
            raise
        failure = classify_compile_error(exc, candidate_file, kernel_names)
        if backend.device.type == "cpu" and "cuda" in failure.message.lower():
            failure.message += f"\n{CPU_DEVICE_HINT}"
        raise failure from exc

    # stage: correctness
    clock.enter("correctness")
    stats = CorrectnessStats()
    verdict.correctness = stats
    policy = options.policy_for(task)
    run_trials(task, models, backend, runner, options.trials, options.seed, dtype, stats,
               rule=ProvenanceRule(policy, options.coverage_threshold), guard=world.check)

    if not backend.timed:
        verdict.stage, verdict.ok = "done", True
        return

    # stage: profile
    clock.enter("profile")
    settings = ProfileSettings(
        timed_calls=max(options.timed_calls, 1), warmup_calls=options.warmup_calls, seed=options.seed,
        compile_baseline=options.compile_baseline, coverage_threshold=options.coverage_threshold,
        reference_mutates_inputs=task.reference_mutates_inputs,
    )
    with timing_lock:
        timing, flags = profile_candidate(task, models, backend, runner, settings, dtype, kernel_names,
                                          guard=world.check)
    verdict.timing = timing
    verdict.flags.extend(flags)
    verdict.stage, verdict.ok = "done", True
