"""Jobs are admitted to a device by their memory allowances: in order, together while they fit,
alone when they cannot fit beside others, never deadlocked."""

from __future__ import annotations

import random
import threading
import time

import pytest

from atrl.harness.sandbox.admission import (
    ALLOWANCE_FLOOR,
    ALLOWANCE_SLACK,
    DeviceAdmission,
    MemoryBudget,
    plan_budget,
)
from atrl.harness.sandbox.footprint import Footprint, empty_footprint

GIB = 1 << 30


def _budget(gib: float, alone: bool = False) -> MemoryBudget:
    return MemoryBudget(estimate=int(gib * GIB), allowance=int(gib * GIB), alone=alone)


def _run_jobs(admission: DeviceAdmission, budgets: list[MemoryBudget], hold_s: float = 0.05):
    """Run one thread per budget, started in list order; returns (admission order, max concurrent)."""
    order: list[int] = []
    running = [0, 0]  # now, most
    alone: list[bool] = []  # per job: whether nothing else ran while it did
    lock = threading.Lock()

    def job(index: int, budget: MemoryBudget) -> None:
        if not admission.acquire(budget, timeout=30):
            return
        with lock:
            order.append(index)
            running[0] += 1
            running[1] = max(running[1], running[0])
            others_before = running[0] - 1
        time.sleep(hold_s)
        with lock:
            if budget.alone:
                alone.append(others_before == 0 and running[0] == 1)
            running[0] -= 1
        admission.release(budget)

    threads = []
    for i, b in enumerate(budgets):
        threads.append(threading.Thread(target=job, args=(i, b)))
        threads[-1].start()
        time.sleep(0.01)  # arrival order
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "deadlock: a job never got the device"
    assert len(order) == len(budgets), "a job timed out waiting for the device"
    assert all(alone), "a job admitted alone ran beside another"
    return order, running[1]


def test_jobs_that_fit_together_run_together():
    order, most = _run_jobs(DeviceAdmission(10 * GIB), [_budget(3), _budget(3), _budget(3)], hold_s=0.3)
    assert most == 3 and order == [0, 1, 2]


def test_a_job_that_does_not_fit_waits_and_nothing_overtakes_it():
    admission = DeviceAdmission(10 * GIB)
    order, most = _run_jobs(admission, [_budget(6), _budget(6), _budget(1)], hold_s=0.2)
    # the second 6 GiB job waits for the first; the 1 GiB job behind it waits too
    assert order == [0, 1, 2] and most == 2 and admission.peak_admitted == 2


def test_an_alone_job_waits_for_an_empty_device_and_holds_it_alone():
    admission = DeviceAdmission(10 * GIB)
    order, most = _run_jobs(admission, [_budget(1), _budget(1), _budget(10, alone=True), _budget(1)], hold_s=0.2)
    assert order == [0, 1, 2, 3] and most == 2  # _run_jobs checks that job 2 ran by itself


def test_many_random_jobs_all_finish_in_order():
    rng = random.Random(0)
    budgets = [_budget(rng.choice([0.5, 2, 5, 9]), alone=rng.random() < 0.15) for _ in range(30)]
    admission = DeviceAdmission(10 * GIB)
    order, _ = _run_jobs(admission, budgets, hold_s=0.005)
    assert order == list(range(30)) and admission.in_use == 0 and admission.admitted == 0


def test_a_wait_past_its_timeout_gives_up_without_holding_anything():
    admission = DeviceAdmission(4 * GIB)
    assert admission.acquire(_budget(3))
    assert not admission.acquire(_budget(3), timeout=0.1)
    admission.release(_budget(3))
    assert admission.acquire(_budget(3), timeout=1)


def _footprint(peak_part: int, method: str = "meta") -> Footprint:
    """An elementwise task's footprint whose inputs and outputs are `peak_part` bytes each."""
    return Footprint(peak_part, peak_part, 2 * peak_part, peak_part, 2 * peak_part, 0, 0, 0, 0,
                     peak_part // 4, False, method)


def test_budget_is_the_estimate_times_the_slack_when_it_fits_and_alone_sliced_when_it_does_not():
    small = _footprint(GIB)
    budget = plan_budget(small, 100 * GIB)
    assert not budget.alone and not budget.float64_sliced
    assert budget.allowance == int(small.peak * ALLOWANCE_SLACK) + ALLOWANCE_FLOOR
    big = _footprint(10 * GIB)  # peak about 12 inputs' worth
    # the estimate alone would fit, but not its slack (an H200 reserved 2x the estimate): sliced
    short_of_slack = plan_budget(big, big.peak + 2 * GIB)
    assert short_of_slack.alone and short_of_slack.float64_sliced and short_of_slack.allowance == big.peak + 2 * GIB
    assert short_of_slack.estimate == big.peak_sliced
    too_big = plan_budget(big, big.peak // 2)
    assert too_big.alone and too_big.float64_sliced and too_big.estimate == big.peak_sliced


@pytest.mark.parametrize("footprint", [empty_footprint(False, "unknown", "no meta"), _footprint(GIB, "meta-inputs")])
def test_unknown_or_approximate_footprints_run_alone_with_the_whole_device(footprint):
    budget = plan_budget(footprint, 50 * GIB)
    assert budget.alone and budget.allowance == 50 * GIB


def test_closing_wakes_a_waiting_job_with_a_refusal():
    admission = DeviceAdmission(4 * GIB)
    assert admission.acquire(_budget(3))
    results = []
    waiter = threading.Thread(target=lambda: results.append(admission.acquire(_budget(3), timeout=30)))
    waiter.start()
    time.sleep(0.1)
    admission.close()
    waiter.join(timeout=5)
    assert not waiter.is_alive() and results == [False]
