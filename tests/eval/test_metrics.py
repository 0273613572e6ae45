import math

import pytest

from atrl.eval.metrics import (
    Attempt,
    by_level,
    compile_rate,
    correctness_rate,
    fast_p,
    mean_pass_at_k,
    pass_at_k,
    speedup_summary,
    summarize,
)


def _a(task, correct, speedup=None, compiled=True, level=1, sample=0):
    return Attempt(task, level, sample, compiled, correct, speedup)


ATTEMPTS = [
    _a("t1", True, 2.0),
    _a("t2", True, 1.0),  # a tie at p = 1.0
    _a("t3", True, 0.5),
    _a("t4", False, None),
    _a("t5", False, None, compiled=False),
]


def test_rates_count_every_attempt():
    assert compile_rate(ATTEMPTS) == pytest.approx(4 / 5)
    assert correctness_rate(ATTEMPTS) == pytest.approx(3 / 5)


def test_fast_p_is_strict_over_all_attempts_and_ge_variant_counts_ties():
    assert fast_p(ATTEMPTS, 1.0) == pytest.approx(1 / 5)  # only t1: t2's tie is not faster
    assert fast_p(ATTEMPTS, 1.0, inclusive=True) == pytest.approx(2 / 5)
    assert fast_p(ATTEMPTS, 0.0) == pytest.approx(3 / 5)
    assert fast_p(ATTEMPTS, 2.0) == 0.0
    assert fast_p(ATTEMPTS, 2.0, inclusive=True) == pytest.approx(1 / 5)


def test_fast_p_unavailable_without_timing():
    untimed = [_a("t1", True, None), _a("t2", False)]
    assert fast_p(untimed, 1.0) is None
    assert speedup_summary(untimed)["geomean"] is None


def test_speedup_means_over_correct_and_failure_aware_geomean():
    s = speedup_summary(ATTEMPTS)
    assert s["geomean"] == pytest.approx((2.0 * 1.0 * 0.5) ** (1 / 3))
    assert s["mean"] == pytest.approx(3.5 / 3)
    assert s["median"] == pytest.approx(1.0)
    assert s["geomean_failures_as_1x"] == pytest.approx((2.0 * 1.0 * 0.5 * 1 * 1) ** (1 / 5))


def test_pass_at_k_matches_hand_computed_values():
    assert pass_at_k(5, 0, 1) == 0.0
    assert pass_at_k(5, 5, 3) == 1.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(4, 2))  # 0.5
    assert pass_at_k(4, 3, 2) == 1.0  # n - c < k
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_mean_pass_at_k_averages_over_tasks():
    attempts = [_a("a", True, sample=0), _a("a", False, sample=1), _a("b", False, sample=0), _a("b", False, sample=1)]
    assert mean_pass_at_k(attempts, 1) == pytest.approx((0.5 + 0.0) / 2)
    assert mean_pass_at_k(attempts, 2) == pytest.approx((1.0 + 0.0) / 2)


def test_summary_and_levels_include_npu_acceptance():
    attempts = ATTEMPTS + [_a("x", True, 0.7, level=2)]
    s = summarize(attempts)
    assert s["npu_accept_0.6"] == pytest.approx(3 / 6)  # 2.0, 1.0, 0.7
    assert s["npu_accept_0.8"] == pytest.approx(2 / 6)
    levels = by_level(attempts)
    assert set(levels) == {1, 2}
    assert levels[2]["correctness"] == 1.0
