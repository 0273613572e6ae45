"""Example entries generated from reference Triton solutions (never stored as files).

`example_entries(tasks)` turns every task that has a `.solution` into an `Entry` with id
`example/<task name>`, platform `any`, kind `example`, the task's tags, and a body made of a
short description and the solution code. `builtin_examples()` does it for the builtin suite.
The retriever drops examples of excluded tasks (leave-own-solution-out).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Protocol

from atrl.kb.entries import Entry

EXAMPLE_PREFIX = "example/"


class SolvedTask(Protocol):
    """What an example needs from a task (`atrl.tasks.task.Task` fits)."""

    id: str
    name: str
    tags: list[str]
    description: str
    solution: str | None


def example_id(task_name: str) -> str:
    """The id of the example entry built from the task called `task_name`."""
    return f"{EXAMPLE_PREFIX}{task_name}"


def example_entry(task: SolvedTask) -> Entry:
    """The example entry of one solved task. Raises ValueError when it has no solution."""
    if not task.solution:
        raise ValueError(f"task {task.id} has no reference solution")
    tags = list(dict.fromkeys(task.tags))  # builtin tags can repeat the family name
    what = task.description.strip() or f"the {task.name} task"
    body = (f"Worked example ({', '.join(tags)}): a Triton solution for {what}\n\n"
            f"# Solution: {task.name}\n```python\n{task.solution.strip()}\n```")
    return Entry(id=example_id(task.name), platform="any", kind="example",
                 title=f"Example: {task.name} ({', '.join(tags)})", tags=tuple(tags), body=body,
                 task_id=task.id, source=f"solution:{task.id}")


def example_entries(tasks: Iterable[SolvedTask]) -> list[Entry]:
    """Example entries for every task with a solution, sorted by id."""
    return sorted((example_entry(t) for t in tasks if t.solution), key=lambda e: e.id)


@lru_cache(maxsize=1)
def builtin_examples() -> tuple[Entry, ...]:
    """Example entries of the builtin suite (loaded once per process)."""
    from atrl.tasks.registry import load_suite

    return tuple(example_entries(load_suite("builtin").tasks))
