"""Trajectories survive a JSONL round trip."""

from __future__ import annotations

from atrl.agent.config import AgentConfig
from atrl.agent.episode import run_episodes
from atrl.agent.trajectory_io import read_trajectories, write_trajectories
from atrl.harness.verdict import Verdict
from atrl.policy.replay import ReplayPolicy


def test_trajectories_round_trip_through_jsonl(tmp_path, task, harness, knowledge, write_replay, attempt_text):
    recs = [{"task_id": task.id, "turn": i, "response": attempt_text(i)} for i in range(3)]
    cfg = AgentConfig(max_turns=3, turns_per_segment=2, context_budget=100_000, max_response_tokens=300)
    trajs = run_episodes(ReplayPolicy(write_replay(recs)), harness, [task], 2, cfg, knowledge=knowledge)
    path = tmp_path / "traj.jsonl"
    assert write_trajectories(path, trajs) == 2
    back = list(read_trajectories(path))
    assert back == trajs
    assert Verdict.from_dict(back[0].turns[0].verdict).error_class == "correctness:mismatch"
    assert back[0].segments[0].summary_fallback is True and back[0].compactions == 1
