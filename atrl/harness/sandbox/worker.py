"""The worker process: runs candidates for the pool, one job at a time.

Started by `atrl.harness.sandbox.pool` as `python -m atrl.harness.sandbox.worker FD` with a scrubbed environment,
its own session (process group) and a private temporary directory as cwd. FD is one end of a
socket pair carrying pickled messages (`multiprocessing.connection.Connection`):

parent → worker: `WorkerConfig` (first), then `("job", job_id, task, code, options, exclusive,
budget)` (budget: the job's `MemoryBudget` or None), `("estimate", task, preset, timed)` (answered
by `("footprint", Footprint)`, measured on the meta device) or `("stop",)`.
worker → parent: `("ready", pid, isolation)` (a dict of the isolation measures in effect),
`("stage", job_id, name)` as each stage starts, `("wait", job_id)` / `("resume", job_id)` around
a wait for the GPU (another job is being timed on it; the stage clock stops meanwhile),
`("memory", job_id, report)` (the job's allowance and peak use, bytes), `("result", job_id, verdict_dict)`, or `("failure", job_id, error_class, message)` when the
runner raised instead of returning; after a failure the worker exits (its state is suspect).

Resource limits are applied to this process before anything heavy is imported, so torch and
triton start under them too. Where the OS allows it (Linux, as root), the worker first moves
into a new network namespace with no usable interface, so candidate code can reach no server.
stdout/stderr are a pipe whose tail the parent keeps.
"""

from __future__ import annotations

import faulthandler
import fcntl
import gc
import importlib
import os
import resource
import signal
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

GIB = 1 << 30
MIB = 1 << 20
CLONE_NEWNET = 0x40000000  # from <sched.h>


@dataclass(frozen=True)
class WorkerLimits:
    """Per-worker resource limits (bytes / processes); `None` leaves a limit as inherited.

    address_space: RLIMIT_AS, CPU backends only (CUDA reserves far more virtual memory than
    it uses); 8 GiB leaves torch + the Triton interpreter ample room.
    file_size: RLIMIT_FSIZE for any file the worker writes (SIGXFSZ is ignored, so an
    oversized write fails with an OSError instead of killing the worker).
    processes: RLIMIT_NPROC; off by default because Linux counts every thread of every
    process of the user against it, including the caller's own.
    gpu_memory_fraction: GPU workers only — PyTorch's cap on this worker's allocations, as a
    share of its GPU (`torch.cuda.set_per_process_memory_fraction`), so that a runaway candidate
    fails with out-of-memory instead of taking the memory of the policy and the other workers
    on the same GPU. It applies until the first job: each job then gets its own allowance from
    its task's footprint (`atrl.harness.sandbox.admission`), which replaces it.
    address_space_ceiling: the hard RLIMIT_AS on CPU workers, up to which a large task's job may
    raise the soft limit (`atrl.harness.sandbox.memory_limits`); None keeps the hard limit at
    `address_space`.
    """

    address_space: int | None = 8 * GIB
    file_size: int | None = 256 * MIB
    processes: int | None = None
    gpu_memory_fraction: float | None = 0.25
    address_space_ceiling: int | None = None


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs to know before its first job."""

    runner: str  # "module:function" with the judge's signature
    limits: WorkerLimits = field(default_factory=WorkerLimits)
    sys_path: tuple[str, ...] = ()  # prepended to sys.path (e.g. a test's fault-runner module)
    timing_lock_path: str | None = None  # flock file shared by the workers of one GPU
    parent_pid: int = 0
    isolate_network: bool = True  # a new network namespace where permitted (see isolate_network)


def _nothing() -> None:
    pass


class DeviceTimingLock:
    """Cross-process reader-writer lock on one device, built on `flock`.

    Timing holds it exclusively (`acquire` / `release`, or as a context manager: the judge's
    `timing_lock`); the other device work of a job (compile's first forward, the correctness
    trials) holds it shared (`acquire_shared` / `release_shared`), so no other candidate's
    kernels run on the GPU while one is being timed. A turnstile file gives timers priority:
    a waiting timer holds it, and new shared holders pass through it, so they queue behind.
    A `flock` is released by the kernel when its holder dies, so a worker killed mid-job
    (timeout, crash) never leaves the device locked — a `multiprocessing.Lock` would.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._main: int | None = None
        self._turnstile: int | None = None
        self._shared = False
        # Called around a wait for the device (another job holds or awaits it): the pool stops
        # the stage clock meanwhile, so time spent queueing is not charged to the candidate.
        self.on_wait: Callable[[], None] = _nothing
        self.on_resume: Callable[[], None] = _nothing

    def _flock(self, fd: int, mode: int) -> None:
        """flock(fd, mode), announcing the wait when the lock is not free at once."""
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        self.on_wait()
        try:
            fcntl.flock(fd, mode)
        finally:
            self.on_resume()

    def _open(self) -> tuple[int, int]:
        if self._main is None or self._turnstile is None:
            self._main = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            self._turnstile = os.open(self.path + ".turnstile", os.O_RDWR | os.O_CREAT, 0o600)
        return self._main, self._turnstile

    def acquire(self, blocking: bool = True) -> bool:
        """Exclusive hold, for timing. Drops this process's shared hold first (waiting for the
        turnstile while holding it shared would deadlock against another timer)."""
        main, turnstile = self._open()
        self.release_shared()
        if blocking:
            self._flock(turnstile, fcntl.LOCK_EX)
            self._flock(main, fcntl.LOCK_EX)
            return True
        try:
            fcntl.flock(turnstile, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        try:
            fcntl.flock(main, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            return False
        return True

    def release(self) -> None:
        if self._main is not None and self._turnstile is not None:
            fcntl.flock(self._main, fcntl.LOCK_UN)
            fcntl.flock(self._turnstile, fcntl.LOCK_UN)

    def acquire_shared(self) -> None:
        """Shared hold for untimed device work; waits while a timer holds or awaits the device."""
        if self._shared:
            return
        main, turnstile = self._open()
        self._flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        self._flock(main, fcntl.LOCK_SH)
        self._shared = True

    def release_shared(self) -> None:
        if self._shared and self._main is not None:
            fcntl.flock(self._main, fcntl.LOCK_UN)
            self._shared = False

    def __enter__(self) -> DeviceTimingLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class NoTimingLock:
    """The lock handed to the judge on untimed backends: never blocks."""

    def acquire(self, blocking: bool = True) -> bool:
        return True

    def release(self) -> None:
        pass

    def acquire_shared(self) -> None:
        pass

    def release_shared(self) -> None:
        pass

    def __enter__(self) -> NoTimingLock:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def apply_limits(limits: WorkerLimits) -> None:
    """Set this process's rlimits (soft and hard, so the candidate cannot raise them back)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name, value in (("RLIMIT_AS", limits.address_space), ("RLIMIT_FSIZE", limits.file_size),
                        ("RLIMIT_NPROC", limits.processes)):
        if value is not None:
            hard = value
            if name == "RLIMIT_AS" and limits.address_space_ceiling is not None:
                hard = max(value, limits.address_space_ceiling)
            resource.setrlimit(getattr(resource, name), (value, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def cap_gpu_memory(fraction: float | None) -> bool:
    """Cap this process's PyTorch allocations on its GPU at `fraction` of the device. Returns
    whether a cap applies (False without CUDA or without a fraction)."""
    if fraction is None:
        return False
    import torch

    if not torch.cuda.is_available():
        return False
    torch.cuda.set_per_process_memory_fraction(fraction)
    return True


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to SIGKILL this worker when the pool's thread that started it dies, so a
    hung candidate never outlives a killed caller."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if parent_pid and os.getppid() != parent_pid:
        os._exit(1)  # the parent died before the request above took effect


def isolate_network() -> bool:
    """Move this process into a new network namespace: only a loopback interface that is down, so
    no connection to any host (this one included) can be made. Needs Linux and CAP_SYS_ADMIN
    (root); elsewhere, or when refused (e.g. a container without the capability), nothing
    changes. Returns whether the namespace is now in effect."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET) == 0
    except (OSError, AttributeError):
        return False


def isolation_measures(limits: WorkerLimits, network_namespace: bool, on_gpu: bool = False) -> dict[str, Any]:
    """The isolation in effect in this worker, for the pool to report (with the free memory of
    its device, which the pool admits jobs against)."""
    from atrl.harness.sandbox.memory_limits import device_free_bytes

    return {"device_free_bytes": device_free_bytes(on_gpu),"scrubbed_environment": True, "private_tmpdir": os.getcwd(), "network_namespace": network_namespace,
            "address_space_bytes": limits.address_space, "file_size_bytes": limits.file_size,
            "processes": limits.processes, "die_with_parent": sys.platform.startswith("linux"),
            "gpu_memory_fraction": limits.gpu_memory_fraction}


def load_runner(spec: str) -> Any:
    """Resolve "module:function" to the callable."""
    module_name, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def _stage_class(stage: str) -> str:
    return "correctness:runtime-error" if stage in ("correctness", "profile") else "compile:error"


def _release_device_memory() -> None:
    """Return this job's cached GPU blocks to the device. Several workers share one GPU, and
    PyTorch's caching allocator would otherwise keep each worker's largest job reserved, so
    later large tasks in other workers fail with out-of-memory through no fault of their own."""
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def _run_job(conn: Connection, runner: Any, timing_lock: Any, job: tuple, config: WorkerConfig) -> bool:
    """Run one job under its memory budget and send its outcome (after its memory report).
    Returns False when the worker must exit afterwards."""
    from atrl.harness.sandbox import memory_limits

    _, job_id, task, code, options, exclusive, budget = job
    # a GPU worker is one with a device timing lock (the pool gives one to every GPU worker)
    job_memory = memory_limits.enforce(budget, config.timing_lock_path is not None, config.limits.address_space)
    current = ["compile"]
    device_lock = timing_lock
    if isinstance(device_lock, DeviceTimingLock):
        device_lock.on_wait = lambda: conn.send(("wait", job_id))
        device_lock.on_resume = lambda: conn.send(("resume", job_id))
    if exclusive:
        # the whole job holds the device alone; the judge's own lock calls become no-ops
        device_lock.acquire()
        timing_lock = NoTimingLock()

    def report_stage(name: str) -> None:
        current[0] = name
        # compile and correctness run kernels too: keep them off a device that is being timed
        if name == "profile":
            timing_lock.release_shared()
        else:
            timing_lock.acquire_shared()
        conn.send(("stage", job_id, name))

    # facts the pool needs if the job times out (size judged, the reference's own time)
    report_stage.note = lambda **facts: conn.send(("note", job_id, facts))  # type: ignore[attr-defined]

    failure: tuple[str, str] | None = None
    try:
        verdict = runner(task, code, options, report_stage=report_stage, timing_lock=timing_lock)
    except MemoryError:
        failure = ("out-of-memory", "MemoryError: the candidate exceeded the worker's memory limit")
    except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt from a candidate too
        tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-3:])
        failure = (_stage_class(current[0]), f"{type(exc).__name__}: {exc}\n{tail}"[-2000:])
    timing_lock.release_shared()
    if job_memory is not None:
        conn.send(("memory", job_id, job_memory.report()))
    _release_device_memory()
    if exclusive:
        device_lock.release()
    if failure is not None:
        conn.send(("failure", job_id, failure[0], failure[1]))
        return False
    from atrl.jsonio import to_jsonable

    conn.send(("result", job_id, to_jsonable(verdict)))
    return True


def serve(conn: Connection) -> None:
    """Receive the config, apply limits, load the runner, then serve jobs until told to stop."""
    config: WorkerConfig = conn.recv()
    _die_with_parent(config.parent_pid)
    network_namespace = config.isolate_network and isolate_network()
    apply_limits(config.limits)
    faulthandler.enable()  # a segfault leaves a Python traceback in the captured output
    for entry in reversed(config.sys_path):
        sys.path.insert(0, entry)
    runner = load_runner(config.runner)
    cap_gpu_memory(config.limits.gpu_memory_fraction)
    timing_lock = DeviceTimingLock(config.timing_lock_path) if config.timing_lock_path else NoTimingLock()
    conn.send(("ready", os.getpid(), isolation_measures(config.limits, network_namespace,
                                                                   config.timing_lock_path is not None)))
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message[0] == "estimate":
            from atrl.harness.sandbox.meta_estimate import estimate_task

            conn.send(("footprint", estimate_task(*message[1:])))
            _release_device_memory()
        elif message[0] != "job" or not _run_job(conn, runner, timing_lock, message, config):
            return


def main(argv: list[str]) -> None:
    conn = Connection(int(argv[1]))
    try:
        serve(conn)
    finally:
        conn.close()
    # Skip interpreter teardown: a candidate's atexit hooks or broken state must not run.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
