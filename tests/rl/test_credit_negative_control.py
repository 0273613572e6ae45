"""The credit study's negative control in training: with one segment per episode (`max_segments: 1`)
segment and trajectory credit are the same objective, so two runs of one seed are identical step by
step; with two segments the same pair differs (the control can tell them apart)."""

from __future__ import annotations

from rl_builders import synthetic_tasks, tiny_config

from atrl.rl.trainer import Trainer

TIMING = ("time_", "generation_tokens_per_s")


def _records(out, credit: str, max_segments: int) -> list[dict]:
    config = tiny_config(out, steps=2, credit=credit, agent={"max_segments": max_segments})
    records = Trainer(config, tasks=synthetic_tasks()).run()
    return [{k: v for k, v in r.items() if not k.startswith(TIMING)} for r in records]


def test_segment_and_trajectory_credit_train_identically_on_single_segment_episodes(tmp_path):
    seg1, traj1 = _records(tmp_path / "seg1", "segment", 1), _records(tmp_path / "traj1", "trajectory", 1)
    assert all(r["multi_segment_fraction"] == 0.0 for r in seg1)
    assert seg1 == traj1
    seg, traj = _records(tmp_path / "seg", "segment", 2), _records(tmp_path / "traj", "trajectory", 2)
    assert all(r["multi_segment_fraction"] == 1.0 for r in seg)
    assert seg != traj
