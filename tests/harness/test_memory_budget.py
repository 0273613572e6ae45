"""Each job runs under its own memory allowance, and an out-of-memory verdict says the numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_footprint import KB_RELU as KB_RELU_SOURCE

from atrl.harness.sandbox.admission import ALLOWANCE_FLOOR, ALLOWANCE_SLACK, MemoryBudget
from atrl.harness.sandbox.memory_limits import (
    address_space_limit,
    failed_request_bytes,
    overrun_message,
    squeezed_by_others,
)
from atrl.harness.sandbox.pool import WorkerPool
from atrl.harness.sandbox.worker import GIB, WorkerLimits
from atrl.harness.stages.judge import JudgeOptions
from atrl.tasks.registry import get_task
from atrl.tasks.task import Task

HERE = str(Path(__file__).parent)
SMALL = JudgeOptions(backend="interpreter", preset="small")
KB_RELU = Task(id="kb/relu", suite="kb", name="relu", level=1,
               source="import torch\nimport torch.nn as nn\n" + KB_RELU_SOURCE)  # 6 GiB of fp32 input


def test_failed_request_sizes_are_read_from_torch_and_numpy_messages():
    assert failed_request_bytes("CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has") == int(2.5 * GIB)
    assert failed_request_bytes("DefaultCPUAllocator: can't allocate memory: you tried to allocate 1024 bytes.") == 1024
    assert failed_request_bytes("Unable to allocate 64.0 GiB for an array") == 64 * GIB
    assert failed_request_bytes("MemoryError") is None


def test_overrun_message_names_the_estimate_the_allowance_and_the_excess():
    budget = MemoryBudget(estimate=int(64.5 * GIB), allowance=int(81.625 * GIB), parts="inputs 6.00 GiB")
    text = overrun_message(budget, {"enforced_bytes": int(81.625 * GIB), "peak_bytes": 70 * GIB},
                           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB.")
    assert "estimate 64.50 GiB (inputs 6.00 GiB)" in text and "allowance 81.62 GiB" in text
    assert "A request of 20.00 GiB failed with 70.00 GiB in use" in text
    assert "about 8.38 GiB over the allowance" in text and text.endswith("Tried to allocate 20.00 GiB.")


def test_an_overrun_under_a_judge_share_below_the_tasks_need_says_to_give_the_judge_more():
    # KernelBench 19_ReLU at its default size under a 60 GiB share: a correct kernel ran out there
    short = MemoryBudget(estimate=int(55.88 * GIB), allowance=60 * GIB, alone=True, parts="inputs 6.00 GiB")
    text = overrun_message(short, {"enforced_bytes": 60 * GIB, "peak_bytes": int(54.28 * GIB)},
                           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 GiB.")
    assert "The judge's whole memory (60.00 GiB) is below what judging this task may take" in text
    assert "113.76 GiB" in text and "memory_gib" in text
    roomy = MemoryBudget(estimate=20 * GIB, allowance=120 * GIB, alone=True, parts="inputs 6.00 GiB")
    assert "judge's whole memory" not in overrun_message(roomy, {"enforced_bytes": 120 * GIB, "peak_bytes": 110 * GIB},
                                                         "CUDA out of memory. Tried to allocate 12.00 GiB.")


# CUDA's caching allocator's words: with a per-process cap set (every judged job has one) it says
# "N allowed;" whichever refused the request, so only the numbers tell the two apart
SQUEEZED = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1024.00 MiB. GPU 0 has a total capacity "
            "of 139.80 GiB of which 218.31 MiB is free. Process 638 has 114.85 GiB memory in use. Including "
            "non-PyTorch memory, this process has 17.50 GiB memory in use. 130.00 GiB allowed; Of the allocated "
            "memory 16.90 GiB is allocated by PyTorch")
CAPPED = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of "
          "139.80 GiB of which 90.10 GiB is free. Including non-PyTorch memory, this process has 26.00 GiB memory "
          "in use. 30.00 GiB allowed; Of the allocated memory 25.00 GiB is allocated by PyTorch")


def test_an_out_of_memory_inside_the_allowance_is_another_process_squeezing_the_device():
    inside = {"enforced_bytes": 130 * GIB, "peak_bytes": 17 * GIB}
    assert squeezed_by_others(inside, 130 * GIB, SQUEEZED)
    assert squeezed_by_others(inside, 130 * GIB, SQUEEZED.split(" GPU 0")[0])  # no free memory named: the numbers
    # the cap refused it (peak + request past it): the candidate's own
    assert not squeezed_by_others({"enforced_bytes": 30 * GIB, "peak_bytes": 26 * GIB}, 30 * GIB, CAPPED)
    assert not squeezed_by_others(inside, 130 * GIB, CAPPED)  # 90 GiB free on the device: it had room
    assert not squeezed_by_others({"enforced_bytes": 17 * GIB, "peak_bytes": 17 * GIB}, 130 * GIB, SQUEEZED)
    assert not squeezed_by_others({"enforced_bytes": None, "peak_bytes": None}, 130 * GIB, SQUEEZED)
    assert not squeezed_by_others(inside, 130 * GIB, "MemoryError: the candidate exceeded the worker's memory limit")


def _gpu_pool(capacity: int) -> WorkerPool:
    return WorkerPool("cuda", "cuda", workers=1, gpus=("0",), runner="fault_runners:run", sys_path=(HERE,),
                      memory_capacity=capacity)


def test_the_pool_calls_a_squeezed_gpu_device_busy_and_a_capped_candidate_out_of_memory(monkeypatch):
    # the pool's GPU path on a CPU machine: the job's peak is the worker's resident growth (small)
    from atrl.harness.sandbox import pool as pool_module

    monkeypatch.setattr(pool_module, "DEVICE_BUSY_BACKOFF", (0.0, 0.0))
    with _gpu_pool(100 * GIB) as pool:
        squeezed = pool.submit(KB_RELU, "oom-message " + SQUEEZED, None).result(timeout=120)
        capped = pool.submit(KB_RELU, "oom-message " + CAPPED, None).result(timeout=120)
    assert squeezed.error_class == "device-busy" and squeezed.memory["alone"], squeezed.message
    assert "another process holds the device's memory" in squeezed.message.lower()
    assert "218.31 MiB free on the device" in squeezed.message and "memory_gib" in squeezed.message
    assert capped.error_class == "out-of-memory" and "over the allowance" in capped.message


def test_a_jobs_address_space_limit_grows_with_its_allowance_within_the_hard_limit():
    assert address_space_limit(8 * GIB, 3 * GIB, 1 * GIB, None) == 8 * GIB  # the baseline's room suffices
    assert address_space_limit(8 * GIB, 3 * GIB, 80 * GIB, None) == 83 * GIB
    assert address_space_limit(8 * GIB, 3 * GIB, 80 * GIB, 50 * GIB) == 50 * GIB


def _pool(workers: int, capacity: int) -> WorkerPool:
    return WorkerPool("interpreter", "cpu", workers=workers, runner="fault_runners:run", sys_path=(HERE,),
                      limits=WorkerLimits(address_space=8 * GIB), memory_capacity=capacity)


def test_a_large_task_gets_an_address_space_limit_from_its_footprint_and_a_small_one_the_baseline():
    small = get_task("builtin/relu")
    with _pool(1, 200 * GIB) as pool:
        big = pool.submit(KB_RELU, "rlimit", None).result(timeout=120)
        normal = pool.submit(small, "rlimit", SMALL).result(timeout=120)
    assert big.memory["estimate_bytes"] == int(64.5 * GIB) and not big.memory["alone"]
    assert big.memory["allowance_bytes"] == int(64.5 * GIB * ALLOWANCE_SLACK) + ALLOWANCE_FLOOR
    assert int(big.message) >= big.memory["allowance_bytes"] > 8 * GIB  # the soft RLIMIT_AS it ran under
    assert int(normal.message) == 8 * GIB and normal.memory["estimate_bytes"] < GIB


def test_the_pool_runs_small_jobs_together_and_a_job_too_large_to_share_alone():
    small = get_task("builtin/relu")
    options = SMALL
    with _pool(2, 140 * GIB) as pool:  # the 64.5 GiB task's allowance (130 GiB) leaves no room beside it
        futures = [pool.submit(small, "sleep 1", options), pool.submit(small, "sleep 1", options),
                   pool.submit(KB_RELU, "sleep 0.2", None), pool.submit(small, "ok", options)]
        verdicts = [f.result(timeout=180) for f in futures]
        stats = pool.admission_stats()["host"]
    assert all(v.ok for v in verdicts)
    assert [v.memory["alone"] for v in verdicts] == [False, False, False, False]
    assert stats == {"capacity_bytes": 140 * GIB, "peak_admitted": 2}
    with _pool(1, 60 * GIB) as pool:  # now even alone it does not fit whole: float64 in slices
        alone = pool.submit(KB_RELU, "ok", None).result(timeout=120)
    assert alone.memory["alone"] and alone.memory["float64_sliced"] and alone.memory["allowance_bytes"] == 60 * GIB


# 8 MiB inputs: a normal run needs well over a few MiB of new address space (several copies)
MID_RELU = Task(id="test/relu-2m", suite="test", name="relu-2m", level=1,
                source=get_task("builtin/relu").source.replace("N = 1 << 26", "N = 1 << 21"))


@pytest.fixture(scope="module")
def relu_verdicts():
    from atrl.harness.api import Harness

    task = MID_RELU
    assert "N = 1 << 21" in task.source
    solution = get_task("builtin/relu").solution.replace("BLOCK = 1024", "BLOCK = 1 << 16")
    hog = solution.replace("        y = torch.empty_like(x)",
                                "        self.hog = torch.empty(1 << 36, dtype=torch.uint8, device=x.device)\n"
                                "        y = torch.empty_like(x)", 1)
    assert hog != solution and "1 << 16" in solution
    with Harness(backend="interpreter", workers=1, use_cache=False, trials=1, preset=None) as harness:
        return harness.evaluate(task, solution), harness.evaluate(task, hog)


def test_a_candidate_far_beyond_its_allowance_on_the_interpreter_is_out_of_memory_with_the_numbers(relu_verdicts):
    _, hog = relu_verdicts
    assert hog.error_class == "out-of-memory"
    assert "task footprint estimate" in hog.message and "allowance" in hog.message
    assert "A request of 64.00 GiB failed" in hog.message and "over the allowance" in hog.message
    assert "over the allowance" in hog.feedback


def test_a_normal_candidate_on_the_interpreter_passes_under_its_allowance(relu_verdicts):
    normal, _ = relu_verdicts
    assert normal.ok, normal.message
    assert normal.memory["peak_bytes"] is not None and normal.memory["estimate_bytes"] > 0


def test_a_task_whose_float64_copy_does_not_fit_is_bounded_in_slices_and_still_catches_a_small_error():
    from atrl.harness.api import Harness

    task = get_task("builtin/softmax")
    store = "tl.store(y_row + cols, tl.exp(x - m) / s, mask=mask)"
    # off by 1e-4 relative: inside allclose's rtol, ten times the float64 bound
    lossy = task.solution.replace(store, "tl.store(y_row + cols, tl.exp(x - m) / s * 1.0001, mask=mask)")
    assert lossy != task.solution
    # 256 MiB cannot hold even this small task's allowance (its 2 GiB floor): it runs alone, sliced
    with Harness(backend="interpreter", workers=1, use_cache=False, trials=1, memory_capacity=256 << 20) as harness:
        right, downgraded = harness.evaluate(task, task.solution), harness.evaluate(task, lossy)
    assert right.ok and right.memory["float64_sliced"] and right.memory["alone"]
    assert right.correctness.relative_error_vs_fp64 is not None and right.correctness.relative_error_vs_fp64 < 1e-6
    # the slices' norms add up to the whole tensor's: the error is seen to be one constant factor
    assert downgraded.error_class == "correctness:mismatch" and downgraded.memory["float64_sliced"]
    assert "the reference times 1.0001 at every element" in downgraded.message


def test_a_gpu_jobs_cap_is_its_allowance_as_a_share_of_the_device(monkeypatch):
    import types

    import torch

    from atrl.harness.sandbox import memory_limits

    fractions = []
    monkeypatch.setattr(memory_limits, "CURRENT", None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: types.SimpleNamespace(total_memory=100 * GIB))
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", lambda f, *a, **k: fractions.append(f))
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda *a, **k: None)
    budget = MemoryBudget(estimate=20 * GIB, allowance=26 * GIB)
    job = memory_limits.enforce(budget, on_gpu=True, address_space_baseline=None)
    assert fractions == [0.26] and job.allowance == 26 * GIB and memory_limits.current_budget() is budget
    alone = memory_limits.enforce(MemoryBudget(estimate=150 * GIB, allowance=120 * GIB, alone=True), True, None)
    assert fractions[-1] == 1.0 and alone.allowance == 100 * GIB


def test_closing_the_pool_fails_a_job_that_waits_for_memory_at_once():
    import time

    from atrl.harness.sandbox.pool import PoolClosedError

    small = get_task("builtin/relu")
    pool = _pool(2, 1536 << 20)  # room for one small job's allowance (1 GiB + its estimate) at a time
    first = pool.submit(small, "sleep 30", SMALL)
    deadline = time.monotonic() + 60  # a loaded machine may take a while to start the worker and measure
    while not any(a is not None and a._admitted for a in pool._admissions.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    waiting = pool.submit(small, "ok", SMALL)
    time.sleep(5)  # the second worker measured it; the job waits for memory
    assert not waiting.done()
    start = time.monotonic()
    pool.close()
    with pytest.raises(PoolClosedError):
        waiting.result(timeout=20)
    with pytest.raises(PoolClosedError):
        first.result(timeout=20)
    assert time.monotonic() - start < 20


def test_an_out_of_memory_under_a_short_allowance_is_judged_again_with_the_whole_device():
    # A GPU pool on a CPU machine (the device index only selects CUDA_VISIBLE_DEVICES): the first run
    # gets the estimate's allowance (64.5 GiB x slack + floor < 150 GiB) and runs out; the retry
    # must get the whole 200 GiB, not the same allowance again.
    with WorkerPool("cuda", "cuda", workers=1, gpus=("0",), runner="fault_runners:run", sys_path=(HERE,),
                    memory_capacity=200 * GIB) as pool:
        verdict = pool.submit(KB_RELU, "oom-unless-allowance 150", None).result(timeout=120)
        hog = pool.submit(KB_RELU, "oom-unless-allowance 500", None).result(timeout=120)
    assert verdict.ok, verdict.message
    assert verdict.memory["alone"] and verdict.memory["allowance_bytes"] == 200 * GIB
    assert hog.error_class == "out-of-memory" and "allowance 200.00 GiB (the whole device, run alone)" in hog.message


def test_a_job_squeezed_once_by_another_process_is_judged_again_and_passes(monkeypatch, tmp_path):
    from atrl.harness.sandbox import pool as pool_module

    monkeypatch.setattr(pool_module, "DEVICE_BUSY_BACKOFF", (0.0, 0.0))
    with _gpu_pool(100 * GIB) as pool:
        verdict = pool.submit(KB_RELU, f"oom-once {tmp_path / 'squeezed'} {SQUEEZED}", None).result(timeout=120)
    assert verdict.ok and (tmp_path / "squeezed").exists(), verdict.message
