"""JSON-lines records: dataclasses to and from JSON, and append-only journals.

A journal is a JSONL file that is only ever appended to, one record per line, flushed and
fsync'd per record. A run killed at any moment leaves at most a torn last line, which
`read_journal` skips (and `Journal` truncates before appending again), so resuming never
duplicates or loses a complete record.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def to_jsonable(obj: Any) -> Any:
    """Dataclasses (nested), pydantic models, paths, tuples → plain JSON values."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return str(obj)  # JSON has no NaN/Inf; keep them readable instead of invalid
    return obj


def dumps(obj: Any) -> str:
    return json.dumps(to_jsonable(obj), ensure_ascii=False, separators=(",", ":"))


def write_atomic(path: str | Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename, so that a
    reader (or a concurrent writer of the same content) never sees a torn file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_journal(path: str | Path) -> Iterator[dict]:
    """Yield every complete record of a JSONL file; a torn (partial) last line is skipped."""
    path = Path(path)
    if not path.exists():
        return
    with path.open("rb") as fh:
        for raw in fh:
            if not raw.endswith(b"\n"):
                return  # torn tail of a killed writer
            line = raw.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


def _truncate_torn_tail(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as fh:
        data = fh.read()
        if data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        fh.truncate(cut)


class Journal:
    """Append-only JSONL writer: one record per line, durable once `append` returns."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _truncate_torn_tail(self.path)
        self._fh = self.path.open("ab")

    def append(self, record: Any) -> None:
        self._fh.write((dumps(record) + "\n").encode())
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
