"""The body of one Ray judge actor: a `WorkerPool` on one GPU (or a group of CPU workers).

Ray turns `JudgeActor` into an actor (`atrl.harness.distributed.fleet`); the class itself imports no
Ray, so it can be read and unit-tested as plain Python. The driver has already extracted the
code, run the static checks and missed the cache: an actor only runs the judge. Requests carry
the candidate's cache key; two requests for one key while the first is running (two drivers
judging the same candidate) share one job.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from atrl.harness.sandbox.pool import DEFAULT_RUNNER, WorkerPool
from atrl.harness.sandbox.worker import WorkerLimits
from atrl.harness.verdict import Verdict

KILLED_WORKER_GRACE_S = 2.0


def _worker_killed(verdict: Verdict) -> bool:
    """The pool's answer for a worker that died by SIGKILL (`WorkerPool._died`)."""
    return verdict.error_class == "crash" and "killed by SIGKILL" in verdict.message


@dataclass(frozen=True)
class JudgeSpec:
    """How every actor of a fleet judges. backend: "auto" | "cuda" | "interpreter" | "ascend". workers:
    worker processes per actor (None: `WORKERS_PER_GPU` per GPU, `CPU_WORKERS_PER_ACTOR` on the
    interpreter). stage_timeouts: seconds per stage (None: the harness defaults for the pool)."""

    backend: str = "auto"
    workers: int | None = None
    stage_timeouts: Mapping[str, float] | None = None
    limits: WorkerLimits | None = None
    runner: str = DEFAULT_RUNNER
    runner_sys_path: tuple[str, ...] = ()
    memory_capacity: int | None = None  # bytes per GPU that jobs are admitted against (None: its free memory)

    def comparable(self) -> dict[str, Any]:
        """The fields two drivers must agree on to share a fleet."""
        return {"backend": self.backend, "workers": self.workers,
                "stage_timeouts": dict(self.stage_timeouts) if self.stage_timeouts else None,
                "limits": self.limits, "runner": self.runner, "runner_sys_path": tuple(self.runner_sys_path),
                "memory_capacity": self.memory_capacity}


CPU_WORKERS_PER_ACTOR = 2


@dataclass(frozen=True)
class MemberInfo:
    """What an actor reports about itself: its backend as the driver's cascade needs it, where
    it runs, its worker count and the spec it was started with."""

    backend: str
    platform: str
    timed: bool
    default_preset: str | None
    device: str
    versions: dict[str, str]
    workers: int
    node: str
    pid: int
    gpus: tuple[str, ...]
    spec: JudgeSpec
    jobs_started: int = 0
    jobs_joined: int = 0  # requests that shared a job already running for their key
    label: str = ""  # the backend as reports name it (e.g. "ascend:lowering"); its name when empty


class JudgeActor:
    """Judges candidates with its own worker pool. `judge` is a coroutine, so Ray runs many
    requests at once on one actor; the pool's slots bound the real parallelism."""

    def __init__(self, spec: JudgeSpec) -> None:
        from atrl.backends import resolve_backend
        from atrl.harness.api import WORKERS_PER_GPU, _visible_gpus, stage_timeouts_for

        backend = resolve_backend(spec.backend)
        gpus = _visible_gpus() if backend.platform == "cuda" else ()  # Ray set CUDA_VISIBLE_DEVICES
        workers = spec.workers or (WORKERS_PER_GPU * len(gpus) if gpus else CPU_WORKERS_PER_ACTOR)
        device = backend.device_name()
        self._pool = WorkerPool(backend.name, device, workers, backend_env=backend.worker_env(), gpus=gpus,
                                stage_timeouts=stage_timeouts_for(spec.stage_timeouts, workers, gpus,
                                                                  backend.stage_time_scale),
                                limits=spec.limits, runner=spec.runner, sys_path=spec.runner_sys_path,
                                cpus=workers,  # the CPUs Ray reserved for this actor (distributed.fleet)
                                python=backend.worker_python(), memory_capacity=spec.memory_capacity)
        self._info = MemberInfo(backend=backend.name, platform=backend.platform, timed=backend.timed,
                                default_preset=backend.default_preset, device=device, versions=backend.versions(),
                                workers=workers, node=socket.gethostname(), pid=os.getpid(), gpus=gpus, spec=spec,
                                label=backend.label)
        self._running: dict[str, Future] = {}  # cache key -> the job judging it
        self._started = 0
        self._joined = 0

    def describe(self) -> MemberInfo:
        from dataclasses import replace

        return replace(self._info, jobs_started=self._started, jobs_joined=self._joined)

    async def judge(self, key: str, task: Any, code: str, options: Any) -> tuple[Verdict, float]:
        """(the judge's verdict for `code`, seconds it took here, queueing for a worker included)."""
        start = time.monotonic()
        running = self._running.get(key)
        if running is None:
            running = self._pool.submit(task, code, options)
            self._running[key] = running
            self._started += 1
            running.add_done_callback(lambda done: self._forget(key, done))
        else:
            self._joined += 1
        verdict = await asyncio.wrap_future(running)
        if _worker_killed(verdict):
            # Ray kills an actor's child processes before the actor itself: a worker killed by
            # SIGKILL may mean this actor is being killed, and then the candidate did nothing
            # wrong. Held back a moment, such an answer never lands: the driver sees the actor
            # lost and sends the job again. (A worker killed on its own is answered late, not lost.)
            await asyncio.sleep(KILLED_WORKER_GRACE_S)
        return verdict, time.monotonic() - start

    def _forget(self, key: str, done: Future) -> None:
        if self._running.get(key) is done:  # a later job for the key may have replaced it
            del self._running[key]

    def close(self) -> None:
        self._pool.close()
