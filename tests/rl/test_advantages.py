"""Advantage estimators against hand-computed values, and the registry."""

from __future__ import annotations

import math

import pytest

from atrl.errors import UsageError
from atrl.rl.advantages import AdvantageOptions, estimator_names, get_estimator, register_estimator

OPT = AdvantageOptions(eps=0.0)


def test_registry_lists_the_four_estimators_and_rejects_unknown_names():
    assert {"grpo", "drgrpo", "atrl", "atrl_hybrid"} <= set(estimator_names())
    with pytest.raises(UsageError, match="nope"):
        get_estimator("nope")
    with pytest.raises(ValueError):
        register_estimator("grpo")(lambda o, r, opt: [])


def test_grpo_normalises_by_sample_std_and_copies_to_every_unit():
    a = get_estimator("grpo")([1.0, 0.0, 0.0, 1.0], [[0.0, 0.0], [0.0], [0.0], [0.0, 0.0, 0.0]], OPT)
    s = math.sqrt(3) / 2  # (1 − 0.5) / sqrt(1/3)
    assert a == [pytest.approx([s, s]), pytest.approx([-s]), pytest.approx([-s]), pytest.approx([s] * 3)]


def test_drgrpo_subtracts_the_mean_only():
    a = get_estimator("drgrpo")([1.0, 0.0, 0.5], [[0.0], [0.0], [0.0]], OPT)
    assert a == [pytest.approx([0.5]), pytest.approx([-0.5]), pytest.approx([0.0])]


def test_atrl_leave_one_out_with_zero_padding_for_ended_trajectories():
    returns = [[1.0, 0.0], [0.5], [0.2, 0.4]]
    a = get_estimator("atrl")([1.0, 0.5, 0.4], returns, OPT)
    assert a == [pytest.approx([0.65, -0.2]), pytest.approx([-0.1]), pytest.approx([-0.55, 0.4])]


def test_atrl_std_scale_divides_by_group_std_at_each_index():
    returns = [[1.0], [0.0]]
    a = get_estimator("atrl")([1.0, 0.0], returns, AdvantageOptions(eps=0.0, atrl_scale="std"))
    sd = math.sqrt(0.5)
    assert a == [pytest.approx([1.0 / sd]), pytest.approx([-1.0 / sd])]


def test_atrl_hybrid_adds_omega_times_atrl_to_grpo():
    outcomes, returns = [1.0, 0.0], [[1.0, 0.0], [0.0]]
    opt = AdvantageOptions(eps=0.0, omega=0.5)
    g = get_estimator("grpo")(outcomes, returns, opt)
    t = get_estimator("atrl")(outcomes, returns, opt)
    h = get_estimator("atrl_hybrid")(outcomes, returns, opt)
    assert h == [
        pytest.approx([gv + 0.5 * tv for gv, tv in zip(gs, ts, strict=True)])
        for gs, ts in zip(g, t, strict=True)
    ]
    assert h[0] != g[0]
