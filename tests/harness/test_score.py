"""The harness score of hand-written verdicts matches HARNESS-SPEC's defaults."""

from __future__ import annotations

import pytest

from atrl.harness.score import ScoreConfig, score_verdict
from atrl.harness.verdict import Timing, Verdict


def _verdict(stage: str, ok: bool = False, error_class: str | None = None, speedup: float | None = None,
             reward_hack: bool = False) -> Verdict:
    timing = Timing(candidate_ms=1.0, reference_ms=speedup, speedup=speedup) if speedup is not None else None
    return Verdict(task_id="builtin/relu", candidate_hash="h", backend="cuda", device="gpu", stage=stage, ok=ok,
                   error_class=error_class, timing=timing, reward_hack=reward_hack)


@pytest.mark.parametrize("stage, error_class", [("format", "format:no-code"), ("static", "static:no-launch"),
                                                ("compile", "compile:error"), ("compile", "timeout"),
                                                ("compile", "crash")])
def test_failures_before_correctness_score_zero(stage, error_class):
    assert score_verdict(_verdict(stage, error_class=error_class)) == 0.0


def test_reward_hack_scores_zero():
    assert score_verdict(_verdict("static", error_class="static:pytorch-compute", reward_hack=True)) == 0.0


@pytest.mark.parametrize("stage, error_class", [("correctness", "correctness:mismatch"),
                                                ("correctness", "timeout"),
                                                ("profile", "correctness:timed-output"),
                                                ("correctness", "correctness:low-triton-share")])
def test_compiled_but_not_accepted_scores_point_one(stage, error_class):
    assert score_verdict(_verdict(stage, error_class=error_class)) == pytest.approx(0.1)


def test_correct_untimed_scores_one():
    assert score_verdict(_verdict("done", ok=True)) == 1.0


@pytest.mark.parametrize("speedup, expected", [(0.5, 1.5), (2.0, 3.0), (3.0, 4.0), (12.0, 4.0)])
def test_correct_timed_adds_capped_speedup(speedup, expected):
    assert score_verdict(_verdict("done", ok=True, speedup=speedup)) == pytest.approx(expected)


def test_config_changes_every_tier():
    config = ScoreConfig(failed=-1.0, incorrect=0.25, correct=2.0, speedup_cap=1.0)
    assert score_verdict(_verdict("compile", error_class="compile:error"), config) == -1.0
    assert score_verdict(_verdict("correctness", error_class="correctness:nan"), config) == 0.25
    assert score_verdict(_verdict("done", ok=True, speedup=5.0), config) == 3.0


def test_non_finite_speedup_gets_no_bonus():
    assert score_verdict(_verdict("done", ok=True, speedup=float("nan"))) == 1.0
