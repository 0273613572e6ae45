"""Errors a user can act on.

A `UsageError` carries one line that names the problem and the fix; the CLI prints it and exits
with status 2 (no traceback unless `--debug`). Library code raises it for bad input: unknown task
ids, malformed files, bad configs, unreachable servers, missing GPUs.
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user. `str(err)` is one line: what is wrong, then how to fix it."""

    def __init__(self, problem: str, fix: str | None = None) -> None:
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem} — {fix}" if fix else problem)


class TaskLoadError(UsageError):
    """A task file could not be read. Names the file and what is wrong with it."""

    def __init__(self, path: str, problem: str, fix: str | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: {problem}", fix)
