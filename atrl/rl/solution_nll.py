"""How far a policy is from answers known to be right: the per-token negative log-likelihood of
each task's reference solution as the answer to the agent's first prompt (the SFT example of the
task), averaged over tasks. No sampling is involved, so a change between two steps is the
policy's, not the luck of its draws; a warm start fitted to the solutions sits near a minimum of
it, and RL that reinforces successes (near-copies of those solutions) lowers it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from atrl.agent.interfaces import Knowledge
from atrl.rl.sft import collate, target_nll_sum
from atrl.rl.sft_data import BuildReport, SftExample, solution_examples
from atrl.tasks.task import Task


def solution_nll_examples(policy: Any, tasks: Sequence[Task], agent: dict[str, Any], platform: str,
                          preset: str | None, knowledge: Knowledge | None) -> list[SftExample]:
    """One example per task with a reference solution that fits the agent's response limit."""
    report = BuildReport()
    knowledge_for: Callable[[str], Knowledge | None] = lambda _platform: knowledge  # noqa: E731
    return solution_examples(policy, [t for t in tasks if t.solution], agent, [platform], [preset],
                             [knowledge is not None], knowledge_for, report)


def solution_nll(model: torch.nn.Module, examples: Sequence[SftExample], pad_id: int, device: torch.device,
                 autocast: bool) -> dict[str, float]:
    """{task id: mean NLL per solution token} under `model` (one forward per example, no grad)."""
    out: dict[str, float] = {}
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for example in examples:
            batch = collate([example], pad_id, device)
            out[example.task_id] = float(target_nll_sum(model, batch, autocast)) / example.num_targets
    model.train(was_training)
    return out
