"""The worker pool survives every way a candidate can fail and always returns a verdict."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from atrl.harness.feedback.failures import FAILURE_CLASSES
from atrl.harness.sandbox.pool import PoolClosedError, StageTimeouts, WorkerPool, scrubbed_env
from atrl.harness.sandbox.worker import GIB, WorkerLimits
from atrl.tasks.task import Task

HERE = str(Path(__file__).parent)
TASK = Task(id="builtin/fake", suite="builtin", name="fake", level=1, source="")
FAST = StageTimeouts(compile=4.0, correctness=2.0, profile=2.0)


def _alive(pid: int) -> bool:
    try:
        import psutil

        return psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except ImportError:
        return os.path.exists(f"/proc/{pid}")
    except Exception:  # psutil.NoSuchProcess between the two calls
        return False


@pytest.fixture
def pool():
    p = WorkerPool("interpreter", "cpu", workers=2, runner="fault_runners:run", sys_path=(HERE,),
                   stage_timeouts=FAST, limits=WorkerLimits(address_space=1 * GIB))
    yield p
    p.close()


def _run(pool: WorkerPool, command: str, timeout: float = 60):
    return pool.submit(TASK, command, None).result(timeout=timeout)


def test_segfault_gives_crash_verdict_naming_the_signal(pool):
    verdict = _run(pool, "segfault")
    assert (verdict.error_class, verdict.stage, verdict.ok) == ("crash", "compile", False)
    assert "SIGSEGV" in verdict.message
    assert verdict.error_class in FAILURE_CLASSES


def test_abort_gives_crash_with_sigabrt(pool):
    assert "SIGABRT" in _run(pool, "abort").message


def test_hang_is_killed_at_stage_timeout(pool):
    start = time.monotonic()
    verdict = _run(pool, "hang")
    assert verdict.error_class == "timeout" and verdict.stage == "compile"
    assert time.monotonic() - start < FAST.compile + 5


def test_timeout_clock_restarts_per_stage_and_names_the_stage(pool):
    verdict = _run(pool, "hang-correctness")
    assert (verdict.error_class, verdict.stage) == ("timeout", "correctness")
    assert verdict.stage_seconds["correctness"] == pytest.approx(FAST.correctness, abs=1.5)


def test_unbounded_allocation_gives_out_of_memory(pool):
    assert _run(pool, "memory").error_class == "out-of-memory"


def test_runner_exception_and_sys_exit_give_verdicts_not_pool_errors(pool):
    raised = _run(pool, "raise")
    assert raised.error_class == "compile:error" and "judge blew up" in raised.message
    assert _run(pool, "exit").error_class == "compile:error"


def test_huge_output_is_drained_without_filling_memory(pool):
    verdict = _run(pool, "print-huge", timeout=120)
    assert verdict.ok, verdict.message


def test_a_crash_does_not_affect_jobs_around_it(pool):
    commands = ["ok", "segfault", "ok", "hang", "ok", "memory", "ok"]
    futures = [pool.submit(TASK, c, None) for c in commands]
    verdicts = [f.result(timeout=120) for f in futures]
    assert [v.ok for v in verdicts] == [c == "ok" for c in commands]
    assert [v.error_class for v in verdicts if not v.ok] == ["crash", "timeout", "out-of-memory"]


def _single(**kw) -> WorkerPool:
    return WorkerPool("interpreter", "cpu", workers=1, runner="fault_runners:run", sys_path=(HERE,),
                      stage_timeouts=FAST, **kw)


def test_worker_is_reused_after_success_and_replaced_after_a_crash():
    with _single() as pool:
        assert _run(pool, "ok").ok
        [first] = pool.worker_pids()
        assert _run(pool, "ok").ok
        assert pool.worker_pids() == [first]
        assert _run(pool, "segfault").error_class == "crash"
        assert not _alive(first)
        assert _run(pool, "ok").ok
        [second] = pool.worker_pids()
    assert second != first


def test_cuda_error_retires_the_worker():
    with _single() as pool:
        assert _run(pool, "cuda-error").error_class == "cuda:error"
        assert pool.worker_pids() == []


def test_out_of_memory_retires_the_worker():
    # its process may still hold what the candidate hoarded
    with _single() as pool:
        assert _run(pool, "oom").error_class == "out-of-memory"
        assert pool.worker_pids() == []
        assert _run(pool, "ok").ok


def test_worker_environment_has_no_credentials(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("HF_TOKEN", "hf-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    with WorkerPool("interpreter", "cpu", workers=1, runner="fault_runners:run", sys_path=(HERE,),
                    backend_env={"TRITON_INTERPRET": "1"}) as pool:
        env = json.loads(_run(pool, "env").message)
        cwd = _run(pool, "cwd").message
    assert not {"OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY"} & set(env)
    assert not any("secret" in v for v in env.values())
    assert env["TRITON_INTERPRET"] == "1" and env["HOME"] == cwd
    assert not os.path.exists(cwd)  # the private temporary directory is removed with the worker


def test_scrubbed_env_keeps_only_the_allowlist():
    env = scrubbed_env("/tmp/w", {"TRITON_INTERPRET": "1"}, source={"PATH": "/bin", "GITHUB_TOKEN": "x", "LANG": "C"})
    assert env["PATH"] == "/bin" and env["LANG"] == "C" and "GITHUB_TOKEN" not in env
    assert env["HOME"] == env["TMPDIR"] == "/tmp/w"


def test_close_leaves_no_worker_processes():
    pool = WorkerPool("interpreter", "cpu", workers=2, runner="fault_runners:run", sys_path=(HERE,),
                      stage_timeouts=StageTimeouts(compile=60))
    assert _run(pool, "ok").ok
    hanging = pool.submit(TASK, "hang", None)
    time.sleep(1.0)
    pids = pool.worker_pids()
    assert pids
    pool.close()
    with pytest.raises(PoolClosedError):
        hanging.result(timeout=20)
    assert not any(_alive(pid) for pid in pids)
    with pytest.raises(PoolClosedError):
        pool.submit(TASK, "ok", None)


def test_timing_lock_excludes_others_and_is_freed_when_its_holder_is_killed(tmp_path):
    import subprocess
    import sys

    from atrl.harness.sandbox.worker import DeviceTimingLock

    path = str(tmp_path / "gpu0.lock")
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time\nfrom atrl.harness.sandbox.worker import DeviceTimingLock\n"
                               f"DeviceTimingLock({path!r}).acquire()\nprint('held', flush=True)\ntime.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert not DeviceTimingLock(path).acquire(blocking=False)
    finally:
        holder.kill()
        holder.wait()
    lock = DeviceTimingLock(path)
    assert lock.acquire(blocking=False)
    lock.release()


def test_crash_summary_keeps_fatal_error_and_candidate_frames_only():
    from atrl.harness.sandbox.crash import crash_summary

    output = ("Fatal Python error: Segmentation fault\n\nCurrent thread 0x7f (most recent call first):\n"
              '  File "/tmp/atrl-worker-x/candidate_ab12.py", line 14 in relu_kernel\n'
              '  File "/venv/site-packages/triton/runtime/interpreter.py", line 1200 in __call__\n'
              '  File "/tmp/atrl-worker-x/candidate_ab12.py", line 25 in forward\n'
              "\nExtension modules: numpy, torch._C (total: 2)\n")
    text, line = crash_summary(output)
    assert line == 14
    assert text.splitlines() == ["Fatal Python error: Segmentation fault", "in your code (innermost first):",
                                 "  line 14 in relu_kernel", "  line 25 in forward"]
    assert crash_summary("plain output\nExtension modules: numpy") == ("plain output", None)


def test_timing_waits_for_shared_device_work_and_shared_work_waits_for_timing(tmp_path):
    import threading

    from atrl.harness.sandbox.worker import DeviceTimingLock

    path = str(tmp_path / "gpu0.lock")
    correctness, timer = DeviceTimingLock(path), DeviceTimingLock(path)  # separate holders, as in two workers
    correctness.acquire_shared()
    assert not timer.acquire(blocking=False)
    correctness.release_shared()
    assert timer.acquire(blocking=False)
    entered = threading.Event()
    waiter = threading.Thread(target=lambda: (correctness.acquire_shared(), entered.set()), daemon=True)
    waiter.start()
    assert not entered.wait(0.5)  # no candidate runs kernels while another is timed
    timer.release()
    assert entered.wait(5)
    correctness.release_shared()


def test_a_shared_holder_that_starts_timing_drops_its_shared_hold(tmp_path):
    from atrl.harness.sandbox.worker import DeviceTimingLock

    lock = DeviceTimingLock(str(tmp_path / "gpu0.lock"))
    lock.acquire_shared()
    with lock:  # would deadlock against a waiting timer if the shared hold were kept
        assert not DeviceTimingLock(lock.path).acquire(blocking=False)
    assert DeviceTimingLock(lock.path).acquire(blocking=False)


def test_gpu_workers_share_one_device_lock_without_deadlock():
    # gpus=("0",): both workers get the same device lock; the fake runner holds it shared through
    # compile/correctness and exclusively while "timing", as the judge does.
    with WorkerPool("cuda", "gpu", workers=2, runner="fault_runners:run", sys_path=(HERE,), gpus=("0",),
                    stage_timeouts=StageTimeouts(compile=30, correctness=30, profile=30)) as pool:
        verdicts = [f.result(timeout=120) for f in [pool.submit(TASK, "ok", None) for _ in range(12)]]
        env = json.loads(_run(pool, "env").message)
    assert all(v.ok for v in verdicts)
    assert env["CUDA_VISIBLE_DEVICES"] == "0"


def test_out_of_memory_on_a_shared_gpu_is_judged_again_with_the_device_alone(tmp_path):
    # The pool's GPU path on a CPU machine: the device index only selects CUDA_VISIBLE_DEVICES.
    with WorkerPool("cuda", "cuda", workers=2, gpus=("0",), runner="fault_runners:run", sys_path=(HERE,)) as gpu_pool:
        verdict = gpu_pool.submit(TASK, "oom-unless-alone", None).result(timeout=120)
    assert verdict.ok, verdict.message



def test_pools_share_timing_locks_through_atrl_gpu_lock_dir(tmp_path, monkeypatch):
    # two runs on one machine: both pools lock the same file for GPU "1", and closing one keeps it
    shared = tmp_path / "locks"
    monkeypatch.setenv("ATRL_GPU_LOCK_DIR", str(shared))
    with WorkerPool("cuda", "cuda", workers=1, gpus=("1",), runner="fault_runners:run", sys_path=(HERE,)) as first:
        with WorkerPool("cuda", "cuda", workers=1, gpus=("1",), runner="fault_runners:run",
                        sys_path=(HERE,)) as second:
            assert first._lock_dir == second._lock_dir == os.path.abspath(shared)
            assert _run(first, "ok").ok and _run(second, "ok").ok
    assert (shared / "gpu1.lock").exists()  # created by the workers, left for the other pools


def test_a_pool_without_the_variable_removes_its_own_lock_dir(monkeypatch):
    monkeypatch.delenv("ATRL_GPU_LOCK_DIR", raising=False)
    with WorkerPool("cuda", "cuda", workers=1, gpus=("0",), runner="fault_runners:run", sys_path=(HERE,)) as p:
        own = p._lock_dir
        assert _run(p, "ok").ok
    assert not os.path.exists(own)


def test_gpu_pools_cap_each_workers_gpu_memory_and_cpu_pools_do_not():
    gpu = WorkerPool("cuda", "cuda", workers=1, gpus=("0",), runner="fault_runners:run", sys_path=(HERE,),
                     limits=WorkerLimits(gpu_memory_fraction=0.1))
    cpu = WorkerPool("interpreter", "cpu", workers=1, runner="fault_runners:run", sys_path=(HERE,))
    try:
        assert gpu.limits.gpu_memory_fraction == 0.1 and gpu.limits.address_space is None
        assert cpu.limits.gpu_memory_fraction is None and cpu.limits.address_space == WorkerLimits().address_space
        assert _run(gpu, "ok").ok  # a CPU machine: the cap is requested, CUDA is absent, the job runs
        assert gpu.isolation["gpu_memory_fraction"] == 0.1
    finally:
        gpu.close()
        cpu.close()


def test_cap_gpu_memory_sets_pytorchs_per_process_fraction(monkeypatch):
    import torch

    from atrl.harness.sandbox.worker import cap_gpu_memory

    calls = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", lambda f, *a, **k: calls.append(f))
    assert cap_gpu_memory(0.25) and calls == [0.25]
    assert not cap_gpu_memory(None) and calls == [0.25]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert not cap_gpu_memory(0.5) and calls == [0.25]


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_a_candidate_allocating_beyond_the_cap_is_out_of_memory_and_the_gpu_stays_free():
    # the candidate asks for 30% of the GPU; its allowance, from relu's footprint, is a few GiB
    import torch

    from atrl.harness.api import Harness
    from atrl.tasks.registry import get_task

    task = get_task("builtin/relu")
    total = torch.cuda.get_device_properties(0).total_memory
    hog = task.solution.replace("        y = torch.empty_like(x)",
                                f"        self.hog = torch.empty({int(0.3 * total)}, dtype=torch.uint8, device=x.device)\n"
                                "        y = torch.empty_like(x)", 1)
    assert hog != task.solution
    with Harness(backend="cuda", workers=1, use_cache=False, limits=WorkerLimits(gpu_memory_fraction=0.05)) as h:
        verdict = h.evaluate(task, hog)
        assert verdict.error_class == "out-of-memory", verdict.message
        assert h.evaluate(task, task.solution).ok  # the same worker slot judges the next candidate


def _judge_while_the_gpu_is_busy(lock_dir, busy_s: float, timeouts: StageTimeouts, command: str = "ok"):
    """Judge one "ok" job on GPU "0" while another process holds that GPU's timing lock (as a
    timing job of another pool would) for `busy_s` seconds."""
    import subprocess
    import sys

    with WorkerPool("cuda", "cuda", workers=1, gpus=("0",), runner="fault_runners:run", sys_path=(HERE,),
                    stage_timeouts=timeouts) as pool:
        assert _run(pool, "ok").ok  # the worker is up before the device gets busy
        path = str(lock_dir / "gpu0.lock")
        holder = subprocess.Popen([sys.executable, "-c",
                                   "import time\nfrom atrl.harness.sandbox.worker import DeviceTimingLock\n"
                                   f"DeviceTimingLock({path!r}).acquire()\nprint('held', flush=True)\n"
                                   f"time.sleep({busy_s})"], stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"
            return _run(pool, command)
        finally:
            holder.kill()
            holder.wait()


def test_waiting_for_a_busy_gpu_is_not_charged_to_the_stage_limit(tmp_path, monkeypatch):
    # The job's compile limit (3 s) is shorter than the time another process keeps the GPU (6 s):
    # the wait is reported separately and the job is judged normally afterwards.
    monkeypatch.setenv("ATRL_GPU_LOCK_DIR", str(tmp_path))
    verdict = _judge_while_the_gpu_is_busy(tmp_path, 6, StageTimeouts(compile=3, correctness=3, profile=3))
    assert verdict.ok, verdict.message
    assert verdict.stage_seconds["device_wait"] > 3


def test_the_wait_for_a_busy_gpu_is_reported_beside_the_workers_own_stage_clock(tmp_path, monkeypatch):
    # the real judge reports its own seconds per stage; the pool's device wait must still show
    monkeypatch.setenv("ATRL_GPU_LOCK_DIR", str(tmp_path))
    verdict = _judge_while_the_gpu_is_busy(tmp_path, 4, StageTimeouts(compile=30, correctness=30, profile=30),
                                           command="ok-clocked")
    assert verdict.ok, verdict.message
    assert verdict.stage_seconds["compile"] == 0.01
    assert verdict.stage_seconds["device_wait"] > 2


def test_a_device_wait_past_its_own_limit_is_device_busy_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("ATRL_GPU_LOCK_DIR", str(tmp_path))
    verdict = _judge_while_the_gpu_is_busy(tmp_path, 30, StageTimeouts(compile=30, device_wait=2))
    assert verdict.error_class == "device-busy"  # the judge's device, not the candidate
    assert "waited more than 2 s for the GPU" in verdict.message
