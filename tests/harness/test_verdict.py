"""The `Verdict` records: how the correctness trials are counted in words."""

from __future__ import annotations

from atrl.harness.verdict import CorrectnessStats


def test_passed_text_names_the_wide_input_trials_among_the_trials():
    assert CorrectnessStats(trials=7, passed=7, wide_trials=2).passed_text() == "7/7 (5 trials + 2 wide-input)"


def test_passed_text_without_wide_trials_is_the_plain_count():
    assert CorrectnessStats(trials=3, passed=2).passed_text() == "2/3"
