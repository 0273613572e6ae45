"""What the agent needs from its neighbours, as protocols: the knowledge base and the harness.

The agent codes against these, so tests can pass small fakes and the real `atrl.kb` retriever and
`atrl.harness.api.Harness` plug in without the agent importing them.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Protocol, runtime_checkable

from atrl.harness.verdict import Verdict
from atrl.tasks.task import Task


@runtime_checkable
class Knowledge(Protocol):
    """Knowledge-base text for the agent's context; an empty string means nothing to add."""

    def for_episode(self, task: Task) -> str:
        """Snippets shown at the start of every segment of an episode on `task`."""
        ...

    def after_verdict(self, task: Task, verdict: Verdict) -> str:
        """Snippets shown after a verdict (e.g. notes on the error it reports)."""
        ...


class Judge(Protocol):
    """The harness surface the agent uses: `submit(task, response)` → a future Verdict.
    (`evaluate_many(pairs, progress)` is used instead when a harness has no `submit`.)"""

    def submit(self, task: Task, response: str) -> Future[Verdict]: ...


def judge_all(harness: object, pairs: list[tuple[Task, str]]) -> list[Verdict]:
    """Verdicts for (task, response) pairs, evaluated concurrently by the harness, in order."""
    if not pairs:
        return []
    submit = getattr(harness, "submit", None)
    if submit is not None:
        futures = [submit(task, response) for task, response in pairs]
        return [f.result() for f in futures]
    evaluate_many = getattr(harness, "evaluate_many", None)
    if evaluate_many is None:
        raise TypeError(f"{type(harness).__name__} has neither submit() nor evaluate_many()")
    return list(evaluate_many(pairs, None))
