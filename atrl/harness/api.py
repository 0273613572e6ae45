"""The harness's public API: `Harness.evaluate / submit / evaluate_many`, and `evaluate`.

One evaluation is the cascade of HARNESS-SPEC: extract (→ `format:no-code`) → static checks
(first violation → its rule) → the cache → a worker running the judge (compile, correctness,
profile) → score → feedback. Extraction and static checks are pure AST work done here in the
caller's process; everything that executes candidate code runs in the worker pool.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from atrl.errors import UsageError
from atrl.harness import HARNESS_VERSION
from atrl.harness.cache import UNCACHED_CLASSES, VerdictCache, cache_key
from atrl.harness.feedback.failures import REWARD_HACK_RULES
from atrl.harness.feedback.text import feedback_text
from atrl.harness.sandbox.pool import DEFAULT_RUNNER, StageTimeouts, WorkerPool
from atrl.harness.sandbox.worker import WorkerLimits
from atrl.harness.score import ScoreConfig, score_verdict
from atrl.harness.verdict import Verdict
from atrl.tasks.task import Task

if TYPE_CHECKING:
    from atrl.backends.base import Backend

WORKERS_PER_GPU = 4
Progress = Callable[[int, int, Verdict], None]


class BackendLike(Protocol):
    """What the driver's side of the cascade reads of a backend: a local `Backend`, or the
    description of the backend remote judges run (`atrl.harness.distributed.fleet.FleetBackend`)."""

    name: str
    platform: str
    timed: bool
    default_preset: str | None

    def device_name(self) -> str: ...

    def versions(self) -> dict[str, str]: ...


def _visible_gpus() -> tuple[str, ...]:
    """Device ids to hand to workers as CUDA_VISIBLE_DEVICES (respecting the caller's own)."""
    import torch

    count = torch.cuda.device_count()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        ids = [v.strip() for v in visible.split(",") if v.strip()]
        return tuple(ids[:count])
    return tuple(str(i) for i in range(count))


def stage_timeouts_for(given: StageTimeouts | Mapping[str, float] | None, workers: int,
                       gpus: Sequence[str], scale: float = 1.0) -> StageTimeouts:
    """The stage limits of a pool of `workers` over `gpus`: `given`, else the defaults with the
    compile and correctness limits times the backend's `stage_time_scale` and the profile limit
    stretched by the workers that may queue for one GPU's timing lock."""
    if isinstance(given, StageTimeouts):
        return given
    if given:
        return StageTimeouts.from_mapping(given)
    waiting = max(1, -(-workers // max(1, len(gpus)))) if gpus else 1
    default = StageTimeouts()
    return StageTimeouts(compile=default.compile * scale, correctness=default.correctness * scale,
                         profile=default.profile * waiting)


def select_gpus(visible: Sequence[str], indices: Sequence[int] | None) -> tuple[str, ...]:
    """The device ids of `visible` at `indices` (torch's device numbering); all when None.
    A data-parallel rank passes its local rank so its workers use its own GPU only."""
    if indices is None:
        return tuple(visible)
    bad = [i for i in indices if not 0 <= i < len(visible)]
    if bad:
        raise UsageError(f"GPU index {bad[0]} is not visible ({len(visible)} GPUs visible)",
                         "pass indices below the number of visible GPUs")
    return tuple(visible[i] for i in indices)


class Harness:
    """Evaluates candidates for tasks on one backend, with a pool of worker processes.

    backend: "auto" | "cuda" | "interpreter" | "ascend". workers: pool size (default: CPU cores on
    the interpreter and ascend's lowering mode, `WORKERS_PER_GPU` per GPU on cuda, one on an NPU,
    which has no timing lock between workers). trials: correctness trials. timed_calls:
    timed calls per side when profiling. preset: task size preset (default: the backend's).
    cache_dir: verdict cache (default `$ATRL_CACHE_DIR` or `~/.cache/atrl/verdicts`);
    use_cache=False neither reads nor writes it. stage_timeouts: seconds per stage, e.g.
    `{"compile": 60, "correctness": 60, "profile": 120}`. compute_policy: override the tasks'
    own ("strict" | "partial"). limits: worker resource limits. runner: the worker's job
    function ("module:function"); only tests replace the real judge. gpus: indices of the
    visible GPUs the workers may use (default: all). memory_capacity: bytes per device that jobs
    are admitted against by their memory allowances (default: the device's free memory less a
    margin; see `atrl.harness.sandbox.admission`).
    """

    def __init__(self, backend: str = "auto", workers: int | None = None, trials: int = 5, timed_calls: int = 100,
                 preset: str | None = None, cache_dir: str | Path | None = None, use_cache: bool = True,
                 stage_timeouts: StageTimeouts | Mapping[str, float] | None = None,
                 score_config: ScoreConfig = ScoreConfig(), compile_baseline: bool = False, *,
                 warmup_calls: int = 10, seed: int = 0, coverage_threshold: float = 0.5,
                 compute_policy: str | None = None, limits: WorkerLimits | None = None,
                 runner: str = DEFAULT_RUNNER, runner_sys_path: tuple[str, ...] = (),
                 gpus: Sequence[int] | None = None, memory_capacity: int | None = None) -> None:
        from atrl.backends import resolve_backend

        resolved = resolve_backend(backend)
        self.gpus = select_gpus(_visible_gpus(), gpus) if resolved.platform == "cuda" else ()
        npu = resolved.platform == "ascend" and resolved.timed
        self.workers = workers or (WORKERS_PER_GPU * len(self.gpus) if self.gpus else 1 if npu else (os.cpu_count() or 1))
        self.stage_timeouts = stage_timeouts_for(stage_timeouts, self.workers, self.gpus, resolved.stage_time_scale)
        if npu:  # like CUDA, the NPU runtime maps far more virtual memory than it uses
            base = limits or WorkerLimits()
            limits = WorkerLimits(None, base.file_size, base.processes, None)
        self.limits = limits
        self.runner = runner
        self.runner_sys_path = tuple(runner_sys_path)
        self.memory_capacity = memory_capacity
        self._pool: WorkerPool | None = None
        self._pool_lock = threading.Lock()
        self._init_cascade(resolved, preset, trials=trials, timed_calls=timed_calls, cache_dir=cache_dir,
                           use_cache=use_cache, score_config=score_config, compile_baseline=compile_baseline,
                           warmup_calls=warmup_calls, seed=seed, coverage_threshold=coverage_threshold,
                           compute_policy=compute_policy)

    def _init_cascade(self, backend: BackendLike, preset: str | None, *, trials: int, timed_calls: int,
                      cache_dir: str | Path | None, use_cache: bool, score_config: ScoreConfig,
                      compile_baseline: bool, warmup_calls: int, seed: int, coverage_threshold: float,
                      compute_policy: str | None) -> None:
        """The driver's side of the cascade, whoever runs the judge: backend, preset, judge
        options, score and cache."""
        from atrl.harness.stages.judge import JudgeOptions
        from atrl.harness.trial_seed import trial_seed

        self.backend = backend
        self.device = backend.device_name()
        self.preset = preset if preset is not None else backend.default_preset
        self.options = JudgeOptions(backend=backend.name, preset=self.preset, trials=trials,
                                    timed_calls=timed_calls, warmup_calls=warmup_calls, seed=trial_seed(seed),
                                    compile_baseline=compile_baseline, coverage_threshold=coverage_threshold,
                                    compute_policy=compute_policy)
        self.score_config = score_config
        self.use_cache = use_cache
        self.cache = VerdictCache(cache_dir)
        self._versions: dict[str, str] | None = None
        # cache key -> the future of the judgement running for it: an identical candidate submitted
        # meanwhile waits for that one instead of taking a worker (a group of episodes often writes
        # the same kernel: 8 of 8 samples of a task, measured on the default policy)
        self._running: dict[str, Future[Verdict]] = {}
        self._running_lock = threading.Lock()

    # ---- public -------------------------------------------------------------------------
    def evaluate(self, task: Task | str, response: str) -> Verdict:
        """Judge one response (an LLM answer or plain source) for `task`; blocks until done."""
        return self.submit(task, response).result()

    def submit(self, task: Task | str, response: str) -> Future[Verdict]:
        """Start judging one response; the future's result is its scored Verdict with feedback.
        Format and static failures and cache hits complete immediately, costing no worker. With the
        cache on, a candidate identical to one being judged waits for that judgement and gets a
        copy of its verdict (marked `cached`), unless that verdict is of a class the cache does
        not keep (a timeout, a crash, ...): then it is judged itself."""
        task = _as_task(task)
        done: Future[Verdict] = Future()
        verdict, code = self._before_worker(task, response)
        if verdict is not None:
            done.set_result(self._finish(verdict, code))
            return done
        key = cache_key(task, self.preset, code, self.backend.name, self.device, HARNESS_VERSION,
                        self._result_options())
        if self.use_cache:
            hit = self.cache.get(task.id, key)
            if hit is not None:
                hit.score = score_verdict(hit, self.score_config)
                done.set_result(hit)
                return done
            with self._running_lock:
                leader = self._running.setdefault(key, done)
            if leader is not done:
                leader.add_done_callback(lambda f: self._follow(f, done, task, key, code))
                return done
        self._start(task, code, key, done)
        return done

    def evaluate_many(self, pairs: list[tuple[Task | str, str]], progress: Progress | None = None) -> list[Verdict]:
        """Judge many (task, response) pairs in parallel; verdicts in input order. One
        candidate's crash or timeout never affects the others. `progress(done, total, verdict)`
        is called in this thread as each one finishes."""
        futures = [self.submit(task, response) for task, response in pairs]
        index = {id(f): i for i, f in enumerate(futures)}
        results: list[Verdict | None] = [None] * len(futures)
        for finished, future in enumerate(as_completed(futures), start=1):
            results[index[id(future)]] = verdict = future.result()
            if progress is not None:
                progress(finished, len(futures), verdict)
        return [v for v in results if v is not None]

    def close(self) -> None:
        """Stop the worker processes (idempotent)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the cascade --------------------------------------------------------------------
    def _before_worker(self, task: Task, response: str) -> tuple[Verdict | None, str]:
        """(the verdict of the extract and static stages or None when the code may run, the code)."""
        from atrl.harness.extract import extract_code
        from atrl.harness.static.checks import check_static

        code = extract_code(response)
        if code is None:
            return self._own(task, response, "format", "format:no-code",
                             "no Python code was found: answer with one ```python block holding the module"), ""
        policy = self.options.policy_for(task)
        violations = check_static(code, compute_policy=policy, allow_torch=tuple(task.allow_torch),
                                  platform=target_platform(task, self.backend))
        if not violations:
            return None, code
        first = violations[0]
        verdict = self._own(task, code, "static", first.rule, first.message, line=first.line)
        verdict.reward_hack = first.rule in REWARD_HACK_RULES
        if len(violations) > 1:
            verdict.message += f"\n(+{len(violations) - 1} more static violation(s))"
        return verdict, code

    def _own(self, task: Task, code: str, stage: str, error_class: str, message: str,
             line: int | None = None) -> Verdict:
        return Verdict.failed(task.id, code, self.backend.name, self.device, stage, error_class, message,
                              line=line, versions=self._backend_versions())

    def _finish(self, verdict: Verdict, code: str) -> Verdict:
        from atrl.harness.static.checks import ignored_definitions

        verdict.harness_version = HARNESS_VERSION
        verdict.ignored_definitions = ignored_definitions(code)
        hint = size_hint(verdict.error_class, self.preset, self.backend)
        if hint:
            verdict.message = f"{verdict.message}\n{hint}" if verdict.message else hint
        verdict.versions = verdict.versions or self._backend_versions()
        verdict.score = score_verdict(verdict, self.score_config)
        verdict.feedback = feedback_text(verdict)
        return verdict

    def _start(self, task: Task, code: str, key: str, done: Future[Verdict]) -> None:
        try:
            running = self._judge(task, code, key)
        except BaseException as exc:  # e.g. a closed pool: identical candidates waiting on `done` fail too
            self._release(key, done)
            done.set_exception(exc)
            raise
        running.add_done_callback(lambda f: self._complete(f, done, task.id, key, code))

    def _complete(self, running: Future, done: Future, task_id: str, key: str, code: str) -> None:
        try:
            verdict = self._finish(running.result(), code)
            if self.use_cache:
                self.cache.put(task_id, key, verdict)
        except BaseException as exc:  # noqa: BLE001 - delivered to the caller through the future
            self._release(key, done)
            done.set_exception(exc)
        else:
            self._release(key, done)
            done.set_result(verdict)

    def _release(self, key: str, done: Future[Verdict]) -> None:
        """`done`'s judgement of `key` is over: later identical candidates read the cache (or, for a
        verdict it does not keep, are judged anew)."""
        with self._running_lock:
            if self._running.get(key) is done:
                del self._running[key]

    def _follow(self, leader: Future[Verdict], done: Future[Verdict], task: Task, key: str, code: str) -> None:
        """An identical candidate's judgement ended: share its verdict, or judge this one."""
        if leader.exception() is not None:
            done.set_exception(leader.exception())
            return
        verdict = leader.result()
        if verdict.error_class in UNCACHED_CLASSES:
            self._start(task, code, key, done)
            return
        shared = copy.deepcopy(verdict)
        shared.cached = True
        done.set_result(shared)

    def _result_options(self) -> dict[str, Any]:
        """The judge options that change a verdict (the cache key covers them)."""
        from dataclasses import asdict

        return asdict(self.options)

    def _backend_versions(self) -> dict[str, str]:
        if self._versions is None:
            self._versions = self.backend.versions()
        return dict(self._versions)

    def _judge(self, task: Task, code: str, key: str) -> Future[Verdict]:
        """Run the judge on code that passed the static checks; `key` is its cache key."""
        return self._get_pool().submit(task, code, self.options)

    def _get_pool(self) -> WorkerPool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = WorkerPool(
                    self.backend.name, self.device, self.workers, backend_env=self.backend.worker_env(),
                    gpus=self.gpus, stage_timeouts=self.stage_timeouts, limits=self.limits,
                    runner=self.runner, sys_path=self.runner_sys_path, memory_capacity=self.memory_capacity,
                    python=self.backend.worker_python())
            return self._pool


def target_platform(task: Task, backend: Backend | BackendLike) -> str:
    """The platform a candidate is written for: Ascend on the ascend backend and for NPUKernelBench
    tasks on any backend (their kernels are meant for Triton-Ascend); else the backend's own."""
    from atrl.backends import SUITE_BACKENDS

    return "ascend" if backend.platform == "ascend" or SUITE_BACKENDS.get(task.suite) == "ascend" else backend.platform


def size_hint(error_class: str | None, preset: str | None, backend: Backend | BackendLike) -> str | None:
    """For a timeout at a preset other than the backend's smaller default (e.g. `full` on the
    interpreter), the sentence saying the size may be the cause; else None. Every suite's
    `small` preset is its smallest, so any other preset runs larger than that default."""
    default = backend.default_preset
    if error_class != "timeout" or default is None or preset == default:
        return None
    return (f"The task ran at preset {preset or 'as written'!r}, larger than the {backend.name} backend's "
            f"default {default!r}: the size may be the cause; try --preset {default}.")


def _as_task(task: Task | str) -> Task:
    if isinstance(task, Task):
        return task
    from atrl.tasks.registry import get_task

    return get_task(task)


def evaluate(task: Task | str, response: str, **harness_options: Any) -> Verdict:
    """Judge one response with a short-lived `Harness(**harness_options)`."""
    with Harness(**harness_options) as harness:
        return harness.evaluate(task, response)
