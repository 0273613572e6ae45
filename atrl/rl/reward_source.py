"""Where rewards come from: the harness in real runs, a synthetic scorer in tests.

A `RewardSource` judges one (task, response) pair into a scored `Verdict`, asynchronously — the
surface the agent's episodes use (`submit`). `atrl.harness.api.Harness` is one.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Protocol, runtime_checkable

from atrl.harness.verdict import Verdict, candidate_hash
from atrl.tasks.task import Task


@runtime_checkable
class RewardSource(Protocol):
    def submit(self, task: Task, response: str) -> Future[Verdict]: ...


class SyntheticScorer:
    """Scores a response by how many of its characters are in `targets`:
    score = min(1, count / saturation).

    A signal a tiny random model can learn in a few dozen steps (its first samples already hit
    the set now and then, so a group's scores differ), reported with the verdict shape of the
    harness: stage `done` and ok once saturated, `correctness` below, `format` at zero.
    """

    def __init__(self, targets: str = "a", saturation: int = 8) -> None:
        if not targets or saturation < 1:
            raise ValueError("the synthetic scorer needs target characters and a positive saturation")
        self.targets = frozenset(targets)
        self.saturation = saturation

    def count(self, response: str) -> int:
        return sum(ch in self.targets for ch in response)

    def score(self, response: str) -> float:
        return min(1.0, self.count(response) / self.saturation)

    def submit(self, task: Task, response: str) -> Future[Verdict]:
        count = self.count(response)
        score = self.score(response)
        stage = "done" if score >= 1.0 else ("correctness" if count else "format")
        verdict = Verdict(
            task_id=task.id,
            candidate_hash=candidate_hash(response),
            backend="synthetic",
            device="cpu",
            stage=stage,
            ok=score >= 1.0,
            score=score,
            feedback=f"{count} target character(s): score {score:.2f}",
        )
        done: Future[Verdict] = Future()
        done.set_result(verdict)
        return done

    def close(self) -> None:
        """Nothing to release (the harness has worker processes; this has none)."""
