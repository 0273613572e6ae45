"""End to end on CPU: a tiny random model, trained through the real agent (multi-turn episodes that
compact) with the synthetic scorer, raises its mean reward; and a resumed run is exact."""

from __future__ import annotations

import statistics

import pytest
from rl_builders import synthetic_tasks, tiny_config

from atrl.jsonio import read_journal
from atrl.rl.trainer import Trainer

TASKS = synthetic_tasks()
TIMING = ("time_generation_s", "time_evaluation_s", "time_update_s", "time_step_s", "generation_tokens_per_s")


@pytest.mark.slow
@pytest.mark.parametrize("estimator", ["atrl", "grpo"])
def test_mean_reward_rises_on_tiny_model_with_compacting_episodes(tmp_path, estimator):
    records = Trainer(tiny_config(tmp_path, estimator=estimator), tasks=TASKS).run()
    assert len(records) == 16
    assert all(r["compactions_per_episode"] >= 1 for r in records)  # every episode compacted
    first = statistics.fmean(r["reward_mean"] for r in records[:4])
    last = statistics.fmean(r["reward_mean"] for r in records[-4:])
    assert last > first + 0.2, (first, last)


@pytest.mark.slow
def test_resumed_run_matches_uninterrupted_run_exactly(tmp_path):
    straight = Trainer(tiny_config(tmp_path / "a", steps=4, save_every=2), tasks=TASKS).run()
    first = Trainer(tiny_config(tmp_path / "b", steps=4, save_every=2), tasks=TASKS)
    for _ in range(3):  # the third step runs past the step-2 checkpoint, then the process "dies"
        first.train_step()
    first.metrics.close()
    resumed = Trainer(tiny_config(tmp_path / "b", steps=4, save_every=2), tasks=TASKS)
    assert resumed.step == 2
    resumed.run()
    logged = list(read_journal(tmp_path / "b" / "metrics.jsonl"))
    assert [r["step"] for r in logged] == [1, 2, 3, 4]

    def strip(r: dict) -> dict:
        return {k: v for k, v in r.items() if k not in TIMING}

    assert [strip(r) for r in logged] == [strip(r) for r in straight]
    assert (tmp_path / "b" / "trajectories" / "step_0003.jsonl").read_text() == (
        tmp_path / "a" / "trajectories" / "step_0003.jsonl"
    ).read_text()
    assert (tmp_path / "b" / "config.yaml").exists()
    assert (tmp_path / "b" / "checkpoints" / "step_000004" / "model" / "config.json").exists()


def test_a_run_checkpointed_every_step_keeps_its_milestones(tmp_path):
    """save_every 1 with keep_every: an interrupted run loses at most its step in progress, and the
    milestones to evaluate later stay (tier 3 of the credit experiment runs this way)."""
    Trainer(tiny_config(tmp_path, steps=3, save_every=1, keep_checkpoints=1, keep_every=2), tasks=TASKS).run()
    kept = sorted(p.name for p in (tmp_path / "checkpoints").glob("step_*"))
    assert kept == ["step_000002", "step_000003"]
