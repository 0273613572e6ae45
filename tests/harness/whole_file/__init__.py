"""Whole-file candidates as LLMs write them (test data, not a package of tests).

`accepted/*.py`: correct kernels that also define the task's `Model`, `get_inputs`,
`get_init_inputs`, helpers, tests or a `__main__` block; the harness must ignore those and accept
them. `rejected/*.py`: candidates that *use* reference names from code ModelNew reaches or that runs
at import; each must be rejected as `static:reference-access` on the line its `# marker:` names.
Every file opens with `# task: builtin/<name>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
_HEADER = re.compile(r"^#\s*(task|marker|style|attack):\s*(.+?)\s*$")


@dataclass(frozen=True)
class WholeFile:
    """One data file: its name, source, task id and, for rejected ones, the offending line."""

    name: str
    source: str
    task: str
    line: int | None


def load(kind: str) -> list[WholeFile]:
    """The files of `accepted` or `rejected`, sorted by name."""
    files = []
    for path in sorted((HERE / kind).glob("*.py")):
        source = path.read_text()
        header = dict(m.groups() for m in map(_HEADER.match, source.splitlines()) if m)
        line = None
        if "marker" in header:
            line = next(n for n, text in enumerate(source.splitlines(), 1)
                        if header["marker"] in text and not text.startswith("#"))
        files.append(WholeFile(path.stem, source, header["task"], line))
    return files
