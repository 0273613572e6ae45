"""Pre-screening of training tasks by the start policy's solve rate.

A group of episodes trains only when its rewards differ: a task the start policy never solves,
or always solves, gives every group of it a zero advantage. Screening runs `atrl eval` of the
start policy on the candidate training tasks (same agent settings as training, several samples
each) and keeps the tasks whose share of solved episodes lies in [low, high]; the kept ids go
into a training config as `task_ids` (with the same `split`, which they narrow).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from atrl.errors import UsageError
from atrl.eval.breakdown import per_task
from atrl.eval.report import load_episodes


@dataclass(frozen=True)
class SolveRate:
    task_id: str
    solved: int
    episodes: int

    @property
    def rate(self) -> float:
        return self.solved / self.episodes


def solve_rates(run_dir: Path) -> list[SolveRate]:
    """Per task of an eval run: episodes with a correct turn, out of its episodes (by task id)."""
    episodes = load_episodes(run_dir)
    if not episodes:
        raise UsageError(f"{run_dir} holds no judged episodes", "screen an `atrl eval --out` directory of a finished run")
    return [SolveRate(row.task_id, row.correct, row.episodes) for row in per_task(episodes)]


def keep(rates: list[SolveRate], low: float, high: float, min_episodes: int = 1) -> list[SolveRate]:
    """The tasks with low <= solve rate <= high and at least `min_episodes` episodes."""
    if not 0.0 <= low <= high <= 1.0:
        raise UsageError(f"screen bounds {low}..{high} are not 0 <= low <= high <= 1", "e.g. --low 0.1 --high 0.7")
    return [r for r in rates if r.episodes >= min_episodes and low <= r.rate <= high]
