"""Invariants 8 and 12 with a real (tiny) model: log-probs recorded in agent segments match a
recomputation under each segment's own context; contexts stay append-only and within budget."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from atrl.agent.config import AgentConfig
from atrl.agent.episode import run_episodes
from atrl.harness.verdict import Verdict
from atrl.tasks.task import Task

TOL = 1e-4


class NoCodeHarness:
    def submit(self, task: Task, response: str) -> Future:
        fut: Future = Future()
        fut.set_result(Verdict(task.id, "h", "fake", "cpu", "format", False, error_class="format:no-code",
                               score=0.0, feedback="No python code block found."))
        return fut


def sampled_runs(logprobs: list) -> list[tuple[int, int]]:
    """Maximal [start, end) runs of tokens that carry a log-prob."""
    runs, start = [], None
    for i, lp in enumerate(logprobs + [None]):
        if lp is not None and start is None:
            start = i
        elif lp is None and start is not None:
            runs.append((start, i))
            start = None
    return runs


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_recorded_logprobs_match_recomputation_under_the_segment_context(tiny_policy, temperature):
    task = Task(id="builtin/relu", suite="builtin", name="relu", level=1,
                source="import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n")
    cfg = AgentConfig(max_turns=3, turns_per_segment=2, context_budget=4096, max_response_tokens=12,
                      summary_tokens=6, temperature=temperature, seed=11, platform="interpreter")
    trajs = run_episodes(tiny_policy, NoCodeHarness(), [task], 2, cfg)
    checked = 0
    for traj in trajs:
        assert len(traj.segments) == 2 and traj.segments[0].summary_text is not None
        for seg in traj.segments:
            assert len(seg.token_ids) == len(seg.token_types) == len(seg.logprobs) <= cfg.context_budget
            for start, end in sampled_runs(seg.logprobs):
                assert set(seg.token_types[start:end]) <= {"response", "summary"}
                (scored,) = tiny_policy.score_tokens([seg.token_ids[:start]], [seg.token_ids[start:end]], temperature)
                assert max(abs(a - b) for a, b in zip(seg.logprobs[start:end], scored, strict=True)) < TOL
                checked += 1
    assert checked == 2 * (3 + 1)  # three responses and one summary per trajectory
