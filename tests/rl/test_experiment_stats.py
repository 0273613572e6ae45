"""The credit experiment's statistics against cases whose answer is known by hand."""

from __future__ import annotations

import math
import random

import pytest

from atrl.rl.experiment_stats import (
    bootstrap_ci,
    cluster_bootstrap_ci,
    curve_area,
    permutation_test,
    sign_flip_test,
)


def test_curve_area_is_the_mean_over_steps():
    assert curve_area([0.0, 0.5, 1.0]) == 0.5
    with pytest.raises(ValueError):
        curve_area([])


def test_permutation_test_of_fully_separated_groups_is_the_smallest_p():
    # 3 vs 3 fully separated: only the observed split and its mirror are as extreme, 2 of C(6,3) = 20
    assert permutation_test([1.0, 1.1, 1.2], [0.0, 0.1, 0.2]) == pytest.approx(2 / 20)


def test_permutation_test_of_identical_groups_is_one():
    assert permutation_test([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]) == 1.0


def test_permutation_test_monte_carlo_agrees_with_exact():
    a, b = [0.9, 0.7, 0.8, 0.6, 0.75], [0.5, 0.6, 0.4, 0.55, 0.7]
    exact = permutation_test(a, b)
    sampled = permutation_test(a, b, exact_limit=1, samples=50_000)
    assert abs(exact - sampled) < 0.01


def test_sign_flip_smallest_p_with_n_pairs():
    assert sign_flip_test([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]) == pytest.approx(2 / 64)
    assert sign_flip_test([0.1, -0.1]) == 1.0


def test_sign_flip_sampled_agrees_with_exact():
    differences = [0.05, -0.02, 0.08, 0.01, 0.04, -0.03, 0.06, 0.02, -0.01, 0.07, 0.03, 0.00]
    exact = sign_flip_test(differences)
    sampled = sign_flip_test(differences, exact_limit=1, samples=50_000)
    assert abs(exact - sampled) < 0.01


def test_bootstrap_interval_covers_the_difference_and_shrinks_with_spread():
    a, b = [1.0, 1.2, 0.8, 1.1, 0.9], [0.0, 0.2, -0.2, 0.1, -0.1]
    low, high = bootstrap_ci(a, b)
    assert low < 1.0 < high and low > 0.5
    wide = bootstrap_ci([1.0, 2.0, 0.0, 1.5, 0.5], [0.0, 1.0, -1.0, 0.5, -0.5])
    assert (wide[1] - wide[0]) > (high - low)
    assert not math.isnan(low)


def test_cluster_bootstrap_shares_the_task_draw_so_task_difficulty_cancels():
    gen = random.Random(7)
    difficulty = {f"t{i}": gen.uniform(0.05, 0.85) for i in range(16)}  # tasks differ far more than the arms
    def arm(shift: float, seeds: range) -> dict[int, dict[str, float]]:
        return {s: {t: d + shift + gen.gauss(0, 0.01) for t, d in difficulty.items()} for s in seeds}
    seg, traj = arm(0.10, range(3)), arm(0.0, range(3, 6))
    low, high = cluster_bootstrap_ci(seg, traj, samples=4000)
    assert low < 0.10 < high and high - low < 0.05
    same_low, same_high = cluster_bootstrap_ci(traj, arm(0.0, range(6, 9)), samples=4000)
    assert same_low < 0 < same_high
