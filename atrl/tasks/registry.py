"""Find tasks by suite and id. The one entry point the CLI, harness, agent and trainer use."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from atrl.errors import TaskLoadError, UsageError
from atrl.tasks.task import Task

SUITES = ("builtin", "kernelbench", "npukernelbench")


@dataclass
class SuiteLoad:
    tasks: list[Task]
    errors: list[TaskLoadError] = field(default_factory=list)


def load_suite(suite: str, path: str | Path | None = None, level: int | None = None) -> SuiteLoad:
    """Load every task of a suite (optionally one level). Malformed files are reported in
    `errors` while the other tasks load."""
    if suite == "builtin":
        from atrl.tasks.builtin_suite import BUILTIN_DIR, load_builtin

        tasks, errors = load_builtin(Path(path) if path else BUILTIN_DIR)
    elif suite in ("kernelbench", "npukernelbench"):
        if path is None:
            raise UsageError(f"the {suite} suite needs a checkout", f"pass --path DIR pointing at your {suite} files")
        root = Path(path).expanduser()
        if not root.exists():
            raise UsageError(f"{root} does not exist", f"pass --path pointing at a {suite} checkout")
        if suite == "kernelbench":
            from atrl.tasks.kernelbench import load_kernelbench

            tasks, errors = load_kernelbench(root)
        else:
            from atrl.tasks.npukernelbench import load_npukernelbench

            tasks, errors = load_npukernelbench(root)
    else:
        raise UsageError(f"unknown suite {suite!r}", f"choose one of {', '.join(SUITES)}")
    if level is not None:
        tasks = [t for t in tasks if t.level == level]
    return SuiteLoad(tasks=tasks, errors=errors)


def get_task(task_id: str, path: str | Path | None = None) -> Task:
    """The task with this id (`suite/name`). Raises `UsageError` naming close matches."""
    suite, slash, _ = task_id.partition("/")
    if not slash:  # a bare name means a builtin task
        suite, task_id = "builtin", f"builtin/{task_id}"
    elif suite not in SUITES:
        raise UsageError(f"task id {task_id!r} names no suite: {suite!r} is not one of {', '.join(SUITES)}",
                         "write SUITE/NAME with one of those suites, or a bare NAME for a builtin task")
    loaded = load_suite(suite, path)
    for task in loaded.tasks:
        if task.id == task_id:
            return task
    name = task_id.rsplit("/", 1)[-1]
    for error in loaded.errors:  # the task's own file exists but is malformed: say what is wrong
        if Path(error.path).stem in (name, f"{name}.solution"):
            raise error
    import difflib

    close = difflib.get_close_matches(task_id, [t.id for t in loaded.tasks], n=3)
    hint = f"did you mean {', '.join(close)}?" if close else "run `atrl tasks list` to see the ids"
    raise UsageError(f"no task {task_id!r}", hint)
