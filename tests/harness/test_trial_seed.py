"""Trial inputs cannot be known in advance: the harness seed is mixed with a machine secret, and
no seed reaches the feedback."""

from __future__ import annotations

from pathlib import Path

import pytest

import atrl.harness.trial_seed as trial_seed_module
from atrl.harness import Harness
from atrl.harness.stages.correctness import trial_plans
from atrl.harness.trial_seed import SECRET_ENV, judge_secret, trial_seed

REPLAYING = Path(__file__).parents[1] / "adversarial" / "candidates" / "replayed_trial_inputs.py"


def test_the_secret_is_made_once_kept_private_and_an_environment_value_overrides_it(monkeypatch, tmp_path):
    monkeypatch.delenv(SECRET_ENV, raising=False)
    monkeypatch.setattr(trial_seed_module, "secret_file", lambda: tmp_path / "atrl" / "judge-secret")
    first = judge_secret()
    assert len(first) == 64 and judge_secret() == first
    assert (tmp_path / "atrl" / "judge-secret").stat().st_mode & 0o077 == 0
    assert list((tmp_path / "atrl").iterdir()) == [tmp_path / "atrl" / "judge-secret"]  # no temporary left
    seed_here = trial_seed(0)
    assert trial_seed(0) == seed_here and trial_seed(1) != seed_here and 0 <= seed_here < 2 ** 63
    monkeypatch.setenv(SECRET_ENV, "another machine")
    assert judge_secret() == "another machine" and trial_seed(0) != seed_here


def test_an_unwritable_cache_gives_a_secret_of_this_process_with_a_warning(monkeypatch, tmp_path):
    monkeypatch.delenv(SECRET_ENV, raising=False)
    monkeypatch.setattr(trial_seed_module, "_process", [])
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setattr(trial_seed_module, "secret_file", lambda: blocked / "atrl" / "judge-secret")
    with pytest.warns(UserWarning, match="cannot be (read|created)"):
        first = judge_secret()
    assert len(first) == 64 and judge_secret() == first  # one secret for the process, said once


def test_trial_labels_name_the_trial_not_its_seed():
    labels = [plan.label for plan in trial_plans(3, 123456789)]
    assert labels == ["trial 1", "trial 2", "trial 3", "wide-inputs normal×1", "wide-inputs normal×10"]


@pytest.mark.slow
def test_a_candidate_that_replays_a_plain_seeds_inputs_passes_only_without_the_secret(monkeypatch, tmp_path):
    source = REPLAYING.read_text()
    monkeypatch.setenv("ATRL_CACHE_DIR", str(tmp_path / "cache"))
    with Harness(backend="interpreter", workers=1, trials=5, use_cache=False) as harness:
        verdict = harness.evaluate("builtin/relu", source)
    assert not verdict.ok and verdict.error_class == "correctness:mismatch"
    assert "seed" not in verdict.feedback.lower()
    monkeypatch.setattr(trial_seed_module, "trial_seed", lambda seed: seed)  # the plain seed: the hole
    with Harness(backend="interpreter", workers=1, trials=5, use_cache=False) as harness:
        assert harness.evaluate("builtin/relu", source).ok
