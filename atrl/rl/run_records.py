"""Training runs on disk as the experiment summaries read them, and the seed band they draw.

`runs_named(root, pattern)`: the folders of `root` whose names match `pattern` and that hold a
non-empty `metrics.jsonl` of `atrl train`, with their records in step order; `SeedRun`: one such
run of an arm and seed, with a metric's curve over its first steps. `seed_band(ax, x,
values, label)`: at each x the mean over seeds as a line and their range (min to max) as a band.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atrl.jsonio import read_journal


@dataclass
class SeedRun:
    arm: str
    seed: int
    records: list[dict]

    def curve(self, key: str, steps: int) -> list[float]:
        return [float(r.get(key, 0.0)) for r in self.records[:steps]]


def runs_named(root: Path, pattern: re.Pattern[str]) -> Iterator[tuple[re.Match[str], Path, list[dict]]]:
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        match = pattern.match(path.name)
        if match and (path / "metrics.jsonl").exists():
            records = sorted(read_journal(path / "metrics.jsonl"), key=lambda r: r["step"])
            if records:
                yield match, path, records


def seed_band(ax: Any, x: Sequence[float], values: Sequence[Sequence[float]], label: str, **line: Any) -> None:
    """`values[i]`: the seeds' values at `x[i]`."""
    ax.plot(x, [statistics.fmean(v) for v in values], label=label, **line)
    ax.fill_between(x, [min(v) for v in values], [max(v) for v in values], alpha=0.2)
