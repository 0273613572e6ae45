"""Trajectories as JSON lines: one `Trajectory` per line (through `atrl.jsonio`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from atrl.agent.records import Segment, Span, Trajectory, Turn
from atrl.jsonio import Journal, read_journal


def trajectory_from_dict(data: dict) -> Trajectory:
    """Rebuild a `Trajectory` from its JSON form (unknown keys are ignored)."""
    segments = []
    for s in data.get("segments", []):
        seg = {k: v for k, v in s.items() if k in Segment.__dataclass_fields__}
        seg["spans"] = [Span(**sp) for sp in s.get("spans", [])]
        segments.append(Segment(**seg))
    turns = [Turn(**{k: v for k, v in t.items() if k in Turn.__dataclass_fields__}) for t in data.get("turns", [])]
    rest = {k: v for k, v in data.items() if k in Trajectory.__dataclass_fields__ and k not in ("segments", "turns")}
    return Trajectory(segments=segments, turns=turns, **rest)


def write_trajectories(path: str | Path, trajectories: Iterable[Trajectory]) -> int:
    """Append trajectories to a JSONL file (created if absent); returns how many were written."""
    n = 0
    with Journal(path) as journal:
        for traj in trajectories:
            journal.append(traj)
            n += 1
    return n


def read_trajectories(path: str | Path) -> Iterator[Trajectory]:
    """Every complete trajectory of a JSONL file, in file order (a torn last line is skipped)."""
    for record in read_journal(path):
        yield trajectory_from_dict(record)
