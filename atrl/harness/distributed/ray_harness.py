"""`RayHarness`: the `Harness` interface with the judge running on a fleet of Ray actors.

Extraction, static checks, the cache lookup, scoring and feedback stay in this (the driver's)
process, exactly as in `Harness`: a format or static rejection and a cache hit never cross the
network. Only code that must run goes to the fleet (`atrl.harness.distributed.fleet`), through this
driver's `Dispatcher` (`atrl.harness.distributed.dispatch`), keyed by its cache key. The cache is the
driver's directory; point `cache_dir` (or `$ATRL_CACHE_DIR`) of every driver at one directory
on shared storage and they share it (writes are atomic renames).
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import asdict
from pathlib import Path

from atrl.harness.api import Harness
from atrl.harness.distributed.dispatch import Dispatcher, DispatchStats
from atrl.harness.distributed.fleet import Fleet, FleetOptions, connect, import_ray, start_fleet
from atrl.harness.distributed.judge_actor import JudgeSpec
from atrl.harness.sandbox.pool import DEFAULT_RUNNER, StageTimeouts
from atrl.harness.sandbox.worker import WorkerLimits
from atrl.harness.score import ScoreConfig
from atrl.harness.verdict import Verdict
from atrl.tasks.task import Task


class RayHarness(Harness):
    """Judges like `Harness(...)` with the same arguments, on the Ray fleet `fleet` (created
    when missing). address: the cluster (see `fleet.connect`; None: `$RAY_ADDRESS`, a
    cluster on this machine, else a new local one). workers: worker processes per actor.
    memory_capacity: bytes per GPU that each actor admits jobs against (None: its free memory).
    `close()` releases this driver's side only; the fleet stays for other drivers."""

    def __init__(self, backend: str = "auto", workers: int | None = None, trials: int = 5, timed_calls: int = 100,
                 preset: str | None = None, cache_dir: str | Path | None = None, use_cache: bool = True,
                 stage_timeouts: StageTimeouts | Mapping[str, float] | None = None,
                 score_config: ScoreConfig = ScoreConfig(), compile_baseline: bool = False, *,
                 warmup_calls: int = 10, seed: int = 0, coverage_threshold: float = 0.5,
                 compute_policy: str | None = None, limits: WorkerLimits | None = None,
                 runner: str = DEFAULT_RUNNER, runner_sys_path: tuple[str, ...] = (),
                 address: str | None = None, fleet: FleetOptions = FleetOptions(),
                 memory_capacity: int | None = None) -> None:
        connect(address)
        timeouts = asdict(stage_timeouts) if isinstance(stage_timeouts, StageTimeouts) else stage_timeouts
        spec = JudgeSpec(backend=backend, workers=workers, stage_timeouts=dict(timeouts) if timeouts else None,
                         limits=limits, runner=runner, runner_sys_path=tuple(runner_sys_path),
                         memory_capacity=memory_capacity)
        self.fleet: Fleet = start_fleet(spec, fleet)
        self.gpus = ()  # the fleet's GPUs are the actors' own
        self.workers = sum(m.workers for m in self.fleet.members)
        ray = import_ray()
        lost = (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError)
        self._dispatcher = Dispatcher(self.fleet.handles, [m.workers for m in self.fleet.members], lost,
                                      fleet_name=fleet.name,
                                      restarting_errors=(ray.exceptions.ActorUnavailableError,))
        self._init_cascade(self.fleet.backend, preset, trials=trials, timed_calls=timed_calls, cache_dir=cache_dir,
                           use_cache=use_cache, score_config=score_config, compile_baseline=compile_baseline,
                           warmup_calls=warmup_calls, seed=seed, coverage_threshold=coverage_threshold,
                           compute_policy=compute_policy)

    @property
    def stats(self) -> DispatchStats:
        """This driver's counts: jobs judged per actor, re-sent, shared, Ray round-trip overhead."""
        return self._dispatcher.stats

    def close(self) -> None:
        self._dispatcher.close()

    def _judge(self, task: Task, code: str, key: str) -> Future[Verdict]:
        return self._dispatcher.submit(key, task, code, self.options)
