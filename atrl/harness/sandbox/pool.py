"""A pool of worker processes that run candidates: timeouts, crashes, limits, replacement.

Each slot of the pool is a thread in this process that owns one worker at a time. It takes a
job from the queue, hands it to its worker (`atrl.harness.sandbox.worker`) and watches it: every stage
has a wall-clock limit that restarts when the worker reports the next stage; on expiry the
worker's process group is SIGKILLed and the job gets a `timeout` verdict. A worker that dies
gives `crash` (naming the signal) or `out-of-memory`; a `cuda:error`, a timeout, a crash or a
runner exception retire the worker, and the slot starts a fresh one for its next job. A job's
future always gets a verdict unless the pool is closed or no worker can start at all.

Workers are started with `subprocess` rather than `multiprocessing`'s spawn context because
spawn copies the caller's whole environment (API keys included) into the child; here the
environment is built from an allowlist. Each worker has its own session (process group), a
private temporary directory (its cwd and HOME, removed when it exits), resource limits, and
stdout/stderr on a pipe of which only the last `OUTPUT_TAIL_BYTES` are kept.
"""

from __future__ import annotations

import atexit
import itertools
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from typing import Any

from atrl.harness.feedback.timeouts import explain_timeout, with_size_note
from atrl.harness.sandbox.admission import CAPACITY_MARGIN, DeviceAdmission, MemoryBudget, plan_budget
from atrl.harness.sandbox.crash import RAN_CODE_CLASSES, crash_summary, looks_like_oom, signal_name
from atrl.harness.sandbox.footprint import Footprint, defines_inputs, empty_footprint, footprint_key
from atrl.harness.sandbox.memory_limits import (
    host_available_bytes,
    overrun_message,
    squeezed_by_others,
    squeezed_message,
)
from atrl.harness.sandbox.worker import WorkerConfig, WorkerLimits
from atrl.harness.verdict import Verdict

DEFAULT_RUNNER = "atrl.harness.stages.judge:judge"
OUTPUT_TAIL_BYTES = 16 * 1024
WORKER_START_TIMEOUT_S = 180.0  # importing torch + triton on a loaded machine
# Names copied from the caller's environment; nothing else is (no keys, tokens, credentials).
# The NVLink-multicast switches stay off in workers as everywhere on shared GPU hosts.
ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONPATH", "LD_LIBRARY_PATH",
                 "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "TRITON_LIBCUDA_PATH", "TRITON_PTXAS_PATH",
                 "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")


class PoolClosedError(RuntimeError):
    """The pool was closed before the job finished."""


class WorkerStartError(RuntimeError):
    """A worker process could not be started (a broken installation, not a candidate's fault)."""


# Seconds waited before each new attempt of a job refused GPU memory by another process's use
# (`device-busy` once they are spent): the memory of a job that ends elsewhere comes back.
DEVICE_BUSY_BACKOFF = (5.0, 20.0)


@dataclass(frozen=True)
class StageTimeouts:
    """Wall-clock limits per stage, seconds. The compile clock starts when the job is sent."""

    compile: float = 60.0
    correctness: float = 60.0
    profile: float = 120.0
    # Waiting for the GPU while other jobs are timed on it (never charged to a stage). Bounded
    # only as a safety net: every holder of the device is itself under a stage limit.
    device_wait: float = 900.0

    def for_stage(self, stage: str) -> float:
        return float(getattr(self, stage, self.compile))

    @classmethod
    def from_mapping(cls, values: Mapping[str, float] | None) -> StageTimeouts:
        return cls(**dict(values)) if values else cls()


@dataclass
class Job:
    """One candidate to run: what the worker gets, and the future its verdict goes to."""

    task: Any
    code: str
    options: Any
    future: Future = field(default_factory=Future)
    job_id: int = 0
    exclusive: bool = False  # hold the GPU alone for the whole job (run alone, or the retry after out-of-memory)
    budget: MemoryBudget | None = None  # its memory allowance (None: a task without inputs)
    memory: dict | None = None  # the worker's report: allowance and peak use, bytes
    facts: dict = field(default_factory=dict)  # the judge's notes (atrl.harness.feedback.timeouts) while it runs


@dataclass
class _Worker:
    proc: subprocess.Popen
    conn: Connection
    tmpdir: str
    output: bytearray
    reader: threading.Thread
    jobs_done: int = 0
    isolation: dict[str, Any] = field(default_factory=dict)  # the measures it reported when ready

    def output_tail(self, limit: int = 6000) -> str:
        self.reader.join(timeout=1.0)  # the pipe closes when the process group is gone
        return bytes(self.output[-limit:]).decode(errors="replace").strip()


def scrubbed_env(tmpdir: str, backend_env: Mapping[str, str], extra: Mapping[str, str] | None = None,
                 source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The worker's environment: allowlisted names from `source` (default `os.environ`), HOME
    and TMPDIR in the worker's directory, the backend's variables, then `extra`."""
    source = os.environ if source is None else source
    env = {name: source[name] for name in ENV_ALLOWLIST if name in source}
    env.update(HOME=tmpdir, TMPDIR=tmpdir, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    env.update(backend_env)
    env.update(extra or {})
    return env


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _drain(stream: Any, sink: bytearray) -> None:
    """Copy a worker's output into `sink`, keeping only the last OUTPUT_TAIL_BYTES."""
    while chunk := stream.read1(65536):
        sink.extend(chunk)
        if len(sink) > 2 * OUTPUT_TAIL_BYTES:
            del sink[: len(sink) - OUTPUT_TAIL_BYTES]
    stream.close()


class WorkerPool:
    """N worker processes evaluating jobs in parallel.

    backend_name/device are copied into the verdicts the pool itself writes (timeouts,
    crashes). backend_env: the backend's `worker_env()`. gpus: device indices to spread
    workers over (round robin; each gets `CUDA_VISIBLE_DEVICES` and that device's timing lock);
    empty for CPU backends, where `limits.address_space` applies. runner: "module:function"
    the worker calls per job — the real judge unless a test injects another. cpus: the CPUs the
    pool may use, shared out as its workers' thread counts (default: the machine's). python: the
    interpreter workers run on (default: this one's; the ascend backend's own environment).

    Memory: each job's task footprint is measured once per task and preset (in a worker, on the
    meta device) and gives the job its allowance; jobs are admitted to each device (a GPU, or the
    host on CPU backends) while their allowances fit its free memory (`atrl.harness.sandbox.admission`).
    memory_capacity: bytes per device to admit against instead of the measured free memory.
    """

    def __init__(self, backend_name: str, device: str, workers: int, backend_env: Mapping[str, str] | None = None,
                 gpus: tuple[str, ...] = (), stage_timeouts: StageTimeouts | None = None,
                 limits: WorkerLimits | None = None, runner: str = DEFAULT_RUNNER,
                 sys_path: tuple[str, ...] = (), max_jobs_per_worker: int = 200,
                 memory_capacity: int | None = None, cpus: int | None = None, python: str | None = None) -> None:
        if workers < 1:
            raise ValueError("a pool needs at least one worker")
        self.backend_name = backend_name
        self.device = device
        self.backend_env = dict(backend_env or {})
        self.gpus = tuple(gpus)
        self.timeouts = stage_timeouts or StageTimeouts()
        limits = limits or WorkerLimits()
        # CUDA maps far more virtual memory than it uses: an address-space cap breaks it.
        if self.gpus:
            self.limits = WorkerLimits(None, limits.file_size, limits.processes, limits.gpu_memory_fraction)
        else:  # no GPU: the address-space limit applies, a GPU memory cap has nothing to cap
            # a large task's job may raise its soft limit up to the host's memory (memory_limits)
            ceiling = limits.address_space_ceiling
            if ceiling is None and limits.address_space is not None:
                ceiling = limits.address_space + (memory_capacity or host_available_bytes() or 0)
            self.limits = WorkerLimits(limits.address_space, limits.file_size, limits.processes, None, ceiling)
        self.memory_capacity = memory_capacity
        self._admissions: dict[str, DeviceAdmission | None] = {}  # "host" or a GPU id -> its admission
        self._footprints: dict[str, Footprint] = {}  # footprint_key -> the task's footprint
        self.runner = runner
        self.python = python or sys.executable
        self.sys_path = tuple(sys_path)
        self.max_jobs_per_worker = max_jobs_per_worker
        self._threads_per_worker = str(max(1, (cpus or os.cpu_count() or 1) // workers))
        # Timing locks are per pool, unless several harnesses share a machine's GPUs (parallel runs):
        # `$ATRL_GPU_LOCK_DIR` names one lock directory for all of them, keyed by physical GPU id.
        shared = os.environ.get("ATRL_GPU_LOCK_DIR")
        self._own_lock_dir = not shared
        if shared:
            os.makedirs(shared, exist_ok=True)
        self._lock_dir = os.path.abspath(shared) if shared else tempfile.mkdtemp(prefix="atrl-pool-")
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._ids = itertools.count(1)
        self._closed = False
        self._state_lock = threading.Lock()
        self._workers: dict[int, _Worker] = {}  # slot index -> live worker
        self.isolation: dict[str, Any] = {}  # the measures the last started worker reported
        self._slots = [threading.Thread(target=self._serve_slot, args=(i,), daemon=True,
                                        name=f"atrl-pool-slot-{i}") for i in range(workers)]
        for thread in self._slots:
            thread.start()
        _LIVE_POOLS.add(self)

    # ---- public -------------------------------------------------------------------------
    def submit(self, task: Any, code: str, options: Any) -> Future:
        """Queue one candidate; the future's result is the judge's `Verdict` (or the pool's
        own timeout/crash verdict)."""
        if self._closed:
            raise PoolClosedError("the worker pool is closed")
        job = Job(task=task, code=code, options=options, job_id=next(self._ids))
        self._queue.put(job)
        return job.future

    def admission_stats(self) -> dict[str, dict[str, int]]:
        """Per device: the capacity admitted against (bytes) and the most jobs admitted at once."""
        with self._state_lock:
            admissions = dict(self._admissions)
        return {device: {"capacity_bytes": a.capacity, "peak_admitted": a.peak_admitted}
                for device, a in admissions.items() if a is not None}

    def worker_pids(self) -> list[int]:
        """Process ids of the live workers (for tests and monitoring)."""
        with self._state_lock:
            return [w.proc.pid for w in self._workers.values()]

    def close(self) -> None:
        """Stop every worker, fail queued jobs with `PoolClosedError`, remove temp dirs. Idempotent."""
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
            workers = list(self._workers.values())
            admissions = [a for a in self._admissions.values() if a is not None]
        for admission in admissions:
            admission.close()
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job is not None and job.future.set_running_or_notify_cancel():
                job.future.set_exception(PoolClosedError("the worker pool was closed"))
        for _ in self._slots:
            self._queue.put(None)
        for worker in workers:
            _kill_group(worker.proc)
        for thread in self._slots:
            thread.join(timeout=15)
        with self._state_lock:
            leftover = list(self._workers.values())
            self._workers.clear()
        for worker in leftover:
            self._dispose(worker)
        if self._own_lock_dir:
            shutil.rmtree(self._lock_dir, ignore_errors=True)
        _LIVE_POOLS.discard(self)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- worker lifecycle ---------------------------------------------------------------
    def _start_worker(self, slot: int) -> _Worker:
        tmpdir = tempfile.mkdtemp(prefix="atrl-worker-")
        gpu = self.gpus[slot % len(self.gpus)] if self.gpus else None
        extra = {"OMP_NUM_THREADS": self._threads_per_worker, "MKL_NUM_THREADS": self._threads_per_worker}
        if gpu is not None:
            extra["CUDA_VISIBLE_DEVICES"] = gpu
        parent_end, child_end = socket.socketpair()
        try:
            proc = subprocess.Popen(
                [self.python, "-m", "atrl.harness.sandbox.worker", str(child_end.fileno())],
                env=scrubbed_env(tmpdir, self.backend_env, extra), cwd=tmpdir, pass_fds=(child_end.fileno(),),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True)
        except OSError as exc:
            parent_end.close()
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise WorkerStartError(f"could not start a worker: {exc}") from exc
        finally:
            child_end.close()
        output = bytearray()
        reader = threading.Thread(target=_drain, args=(proc.stdout, output), daemon=True)
        reader.start()
        worker = _Worker(proc=proc, conn=Connection(parent_end.detach()), tmpdir=tmpdir, output=output, reader=reader)
        with self._state_lock:
            self._workers[slot] = worker
            closed = self._closed
        if closed:
            raise PoolClosedError("the worker pool was closed")
        lock_path = os.path.join(self._lock_dir, f"gpu{gpu}.lock") if gpu is not None else None
        config = WorkerConfig(runner=self.runner, limits=self.limits, sys_path=self.sys_path,
                              timing_lock_path=lock_path, parent_pid=os.getpid())
        try:
            worker.conn.send(config)
            if not worker.conn.poll(WORKER_START_TIMEOUT_S):
                raise WorkerStartError(f"a worker did not start within {WORKER_START_TIMEOUT_S:.0f} s")
            message = worker.conn.recv()
        except (EOFError, OSError) as exc:
            self._retire(slot)
            raise WorkerStartError(f"a worker died while starting: {worker.output_tail()[-1500:]}") from exc
        except WorkerStartError:
            self._retire(slot)
            raise
        if message[0] != "ready":
            self._retire(slot)
            raise WorkerStartError(f"unexpected first message from a worker: {message!r}")
        self.isolation = worker.isolation = dict(message[2]) if len(message) > 2 else {}
        return worker

    def _retire(self, slot: int) -> None:
        with self._state_lock:
            worker = self._workers.pop(slot, None)
        if worker is not None:
            self._dispose(worker)

    @staticmethod
    def _dispose(worker: _Worker) -> None:
        _kill_group(worker.proc)
        worker.conn.close()
        worker.reader.join(timeout=2.0)
        shutil.rmtree(worker.tmpdir, ignore_errors=True)

    # ---- running jobs -------------------------------------------------------------------
    def _serve_slot(self, slot: int) -> None:
        while True:
            job = self._queue.get()
            if job is None or self._closed:
                if job is not None and job.future.set_running_or_notify_cancel():
                    job.future.set_exception(PoolClosedError("the worker pool was closed"))
                self._retire(slot)
                return
            if not job.future.set_running_or_notify_cancel():
                continue
            try:
                verdict = self._judge(slot, job)
            except BaseException as exc:  # noqa: BLE001 - the future must learn of any failure
                job.future.set_exception(exc if not self._closed else PoolClosedError("the worker pool was closed"))
            else:
                job.future.set_result(verdict)

    def _judge(self, slot: int, job: Job) -> Verdict:
        """Run a job under its memory budget, admitted to its device; an out-of-memory beside
        other jobs on a GPU is judged once more alone; one inside the allowance (another process
        holds the GPU) is judged again after each `DEVICE_BUSY_BACKOFF` wait, then `device-busy`;
        an out-of-memory verdict says the numbers."""
        job.budget = self._budget(slot, job)
        verdict = self._admitted_run(slot, job)
        if verdict.error_class == "out-of-memory" and self.gpus and not job.exclusive:
            # Other jobs shared the GPU, or the estimate fell short of the judge's own peak (on an
            # H200 PyTorch's reserved memory reached 1.5-1.65x the estimate). Judge it once more with
            # the whole device: alone, nobody else's memory is at stake, so only a candidate that
            # needs more than the device holds is out of memory.
            job.exclusive = True
            admission = self._admission(slot)
            if job.budget is not None:
                whole = max(job.budget.allowance, admission.capacity if admission is not None else 0)
                job.budget = replace(job.budget, alone=True, allowance=whole)
            verdict = self._admitted_run(slot, job)
        for backoff in DEVICE_BUSY_BACKOFF:
            if not self._squeezed(job, verdict):
                break
            # inside its allowance, yet refused: something outside this pool holds the GPU. Its
            # memory may come back (another judge's job ending): wait, then judge again.
            time.sleep(backoff)
            verdict = self._admitted_run(slot, job)
        if self._squeezed(job, verdict):
            verdict.error_class = "device-busy"
            verdict.message = squeezed_message(job.budget, job.memory, verdict.message)[-2000:]
        elif verdict.error_class == "out-of-memory" and job.budget is not None:
            verdict.message = overrun_message(job.budget, job.memory, verdict.message)[-2000:]
        if job.budget is not None:
            verdict.memory = {"estimate_bytes": job.budget.estimate, "allowance_bytes": job.budget.allowance,
                              "alone": job.budget.alone, "float64_sliced": job.budget.float64_sliced,
                              "method": job.budget.method, **(job.memory or {})}
        return verdict

    def _squeezed(self, job: Job, verdict: Verdict) -> bool:
        """An out-of-memory on a GPU with the job inside its allowance (`squeezed_by_others`)."""
        return (verdict.error_class == "out-of-memory" and job.budget is not None and bool(self.gpus)
                and squeezed_by_others(job.memory, job.budget.allowance, verdict.message))

    def _admitted_run(self, slot: int, job: Job) -> Verdict:
        admission = self._admission(slot) if job.budget is not None else None
        if admission is None or job.budget is None:
            return self._run_on_slot(slot, job)
        if job.budget.alone and self.gpus:
            job.exclusive = True
        if not admission.acquire(job.budget, timeout=self.timeouts.device_wait):
            if self._closed:
                raise PoolClosedError("the worker pool was closed")
            return self._own_verdict(job, "compile", "device-busy", f"waited more than {self.timeouts.device_wait:g} s "
                                     "for the device's memory, which other jobs kept busy (not this candidate's "
                                     "fault: judge it again)", {})
        try:
            return self._run_on_slot(slot, job)
        finally:
            admission.release(job.budget)

    def _budget(self, slot: int, job: Job) -> MemoryBudget | None:
        """The job's memory budget from its task's footprint (measured once per task and preset)."""
        task, timed = job.task, bool(self.gpus)
        preset = getattr(job.options, "preset", None)
        if not defines_inputs(getattr(task, "source", ""), bool(getattr(task, "multi_case", False))):
            return None
        admission = self._admission(slot)
        if admission is None:  # the device's free memory cannot be read: limits stay as configured
            return None
        key = footprint_key(task, preset, timed)
        footprint = self._footprints.get(key)
        if footprint is None:
            footprint = self._measure(slot, task, preset, timed)
        return plan_budget(footprint, admission.capacity)

    def _measure(self, slot: int, task: Any, preset: str | None, timed: bool) -> Footprint:
        """The task's footprint, measured by the slot's worker and cached; a measurement that
        does not finish in the compile stage's time (the worker is then replaced) counts as
        unknown, uncached."""
        worker = self._ensure_worker(slot)
        try:
            worker.conn.send(("estimate", task, preset, timed))
            if worker.conn.poll(self.timeouts.compile):
                message = worker.conn.recv()
                if message[0] == "footprint":
                    self._footprints[footprint_key(task, preset, timed)] = message[1]
                    return message[1]
        except (EOFError, OSError):
            pass
        self._retire(slot)
        return empty_footprint(timed, "unknown", "the measurement on the meta device did not finish")

    def _admission(self, slot: int) -> DeviceAdmission | None:
        """The admission of the slot's device, created on first use from its free memory less the
        margin (or `memory_capacity`); None where the free memory cannot be read."""
        device = self.gpus[slot % len(self.gpus)] if self.gpus else "host"
        with self._state_lock:
            if device in self._admissions:
                return self._admissions[device]
        capacity = self.memory_capacity
        if capacity is None:
            free = self._ensure_worker(slot).isolation.get("device_free_bytes")
            capacity = int(free * (1 - CAPACITY_MARGIN)) if free else None
        with self._state_lock:
            return self._admissions.setdefault(device, DeviceAdmission(capacity) if capacity else None)

    def _ensure_worker(self, slot: int) -> _Worker:
        with self._state_lock:
            worker = self._workers.get(slot)
        if worker is None or worker.proc.poll() is not None:
            if worker is not None:
                self._retire(slot)
            try:
                worker = self._start_worker(slot)
            except WorkerStartError:
                worker = self._start_worker(slot)  # one retry: a transient failure (e.g. load)
        return worker

    def _run_on_slot(self, slot: int, job: Job) -> Verdict:
        worker = self._ensure_worker(slot)
        verdict, keep = self._watch(worker, job)
        if verdict.error_class == "out-of-memory":
            verdict.message = with_size_note(verdict.message, job.facts)
        worker.jobs_done += 1
        if not keep or worker.jobs_done >= self.max_jobs_per_worker:
            self._retire(slot)
        return verdict

    def _watch(self, worker: _Worker, job: Job) -> tuple[Verdict, bool]:
        """Send the job and follow it to its end. Returns (verdict, whether the worker may be reused)."""
        stage, stage_start = "compile", time.monotonic()
        seconds: dict[str, float] = {}
        waiting_since: float | None = None  # the worker is queueing for the GPU: stage clock stopped
        facts = job.facts  # the judge's notes, to explain a timeout or running out of memory
        facts.clear()
        try:
            worker.conn.send(("job", job.job_id, job.task, job.code, job.options, job.exclusive, job.budget))
        except OSError:
            return self._died(worker, job, stage, seconds), False
        while True:
            now = time.monotonic()
            if waiting_since is None:
                remaining = self.timeouts.for_stage(stage) - seconds.get(stage, 0.0) - (now - stage_start)
            else:
                remaining = self.timeouts.device_wait - (now - waiting_since)
            try:
                ready = remaining > 0 and worker.conn.poll(remaining)
                message = worker.conn.recv() if ready else None
            except (EOFError, OSError):
                if waiting_since is None:
                    seconds[stage] = seconds.get(stage, 0.0) + time.monotonic() - stage_start
                return self._died(worker, job, stage, seconds), False
            if message is None:
                _kill_group(worker.proc)
                if waiting_since is not None:
                    seconds["device_wait"] = seconds.get("device_wait", 0.0) + time.monotonic() - waiting_since
                    return self._own_verdict(job, stage, "device-busy", "waited more than "
                                             f"{self.timeouts.device_wait:g} s for the GPU, which other jobs kept "
                                             "busy (not this candidate's fault: judge it again)", seconds), False
                seconds[stage] = seconds.get(stage, 0.0) + time.monotonic() - stage_start
                limit = self.timeouts.for_stage(stage)
                text, diagnosis = explain_timeout(stage, limit, facts, getattr(job.options, "trials", 0))
                verdict = self._own_verdict(job, stage, "timeout", text, seconds)
                verdict.diagnosis = diagnosis.to_dict()
                return verdict, False
            kind = message[0]
            if kind == "note":
                facts.update(message[2])
                continue
            if kind == "wait":
                seconds[stage] = seconds.get(stage, 0.0) + time.monotonic() - stage_start
                waiting_since = time.monotonic()
            elif kind == "resume":
                if waiting_since is not None:
                    seconds["device_wait"] = seconds.get("device_wait", 0.0) + time.monotonic() - waiting_since
                waiting_since = None
                stage_start = time.monotonic()
            elif kind == "memory":
                job.memory = message[2]
            elif kind == "stage":
                now = time.monotonic()
                seconds[stage] = seconds.get(stage, 0.0) + now - stage_start
                stage, stage_start = message[2], now
            elif kind == "result":
                seconds[stage] = seconds.get(stage, 0.0) + time.monotonic() - stage_start
                verdict = Verdict.from_dict(message[2])
                if not verdict.stage_seconds:
                    verdict.stage_seconds = {k: round(v, 4) for k, v in seconds.items()}
                elif "device_wait" in seconds:  # the worker's clock ran on while it queued for the GPU
                    verdict.stage_seconds["device_wait"] = round(seconds["device_wait"], 4)
                if verdict.error_class in RAN_CODE_CLASSES and looks_like_oom(verdict.message):
                    verdict.error_class = "out-of-memory"
                # After a CUDA error the context is unusable; after running out of memory the
                # process may keep the candidate's hoard (the allocator does not always give it
                # back): either way the next job gets a fresh worker.
                return verdict, verdict.error_class not in ("cuda:error", "out-of-memory")
            elif kind == "failure":
                seconds[stage] = seconds.get(stage, 0.0) + time.monotonic() - stage_start
                error_class, text = message[2], message[3]
                if looks_like_oom(text):
                    error_class = "out-of-memory"
                return self._own_verdict(job, stage, error_class, text, seconds), False

    def _died(self, worker: _Worker, job: Job, stage: str, seconds: dict[str, float]) -> Verdict:
        try:
            code = worker.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _kill_group(worker.proc)
            code = worker.proc.returncode
        tail = worker.output_tail()
        if self._closed:
            raise PoolClosedError("the worker pool was closed")
        if looks_like_oom(tail):
            return self._own_verdict(job, stage, "out-of-memory", f"the worker ran out of memory\n{tail}", seconds)
        how = f"was killed by {signal_name(code)}" if code is not None and code < 0 else f"exited with status {code}"
        hint = " (possibly the system's out-of-memory killer)" if code == -signal.SIGKILL else ""
        summary, line = crash_summary(tail)
        message = f"the worker process {how}{hint} during the {stage} stage\n{summary}".strip()
        verdict = self._own_verdict(job, stage, "crash", message, seconds)
        verdict.line = line
        return verdict

    def _own_verdict(self, job: Job, stage: str, error_class: str, message: str,
                     seconds: dict[str, float]) -> Verdict:
        return Verdict.failed(job.task.id, job.code, self.backend_name, self.device, stage, error_class,
                              message[-2000:], stage_seconds={k: round(v, 4) for k, v in seconds.items()})


_LIVE_POOLS: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


@atexit.register
def _close_live_pools() -> None:
    for pool in list(_LIVE_POOLS):
        pool.close()
