"""The n/a rule: what a metric reads when it has no value, the same in the `atrl eval` table,
report.md and metrics.json.

A metric without a value reads "n/a (<why>)". Speed metrics (fast_p, speedup means, NPU
acceptance) on a backend that cannot time read "n/a (not timed on <backend>)" in every run on that
backend, whatever the data: never 0% in one run and unknown in another. Whether a run is timed is
a property of the backends that judged its episodes (`EpisodeSummary.backend`, `.timed`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from atrl.eval.episodes import EpisodeSummary
from atrl.eval.metrics import is_speed_metric

MetricValue = float | str | None  # a number, or an n/a text with its reason


@dataclass(frozen=True)
class RunTiming:
    """Whether a run's speed metrics exist. `untimed` names the backends that could not time
    (empty when `timed`)."""

    timed: bool
    backends: tuple[str, ...]
    untimed: tuple[str, ...] = ()

    @property
    def not_timed(self) -> str:
        """The n/a text of every speed metric of an untimed run."""
        return f"n/a (not timed on {', '.join(self.untimed)})"


def run_timing(episodes: Sequence[EpisodeSummary], configured_backend: str | None = None) -> RunTiming:
    """The timing of a run from its episodes. Episodes journaled before the backend was recorded
    (`timed is None`) count as timed when any of their turns has a speedup (an untimed backend
    never produces one), and are named by `configured_backend` (config.yaml's) when known."""
    fallback = configured_backend if configured_backend and configured_backend != "auto" else "unrecorded backend"
    legacy = [ep for ep in episodes if ep.timed is None]
    legacy_timed = any(t.speedup is not None for ep in legacy for t in ep.turns)
    backends: dict[str, bool] = {}
    for ep in episodes:
        name = ep.backend or fallback
        timed = legacy_timed if ep.timed is None else ep.timed
        backends[name] = backends.get(name, True) and timed
    untimed = tuple(sorted(name for name, timed in backends.items() if not timed))
    return RunTiming(timed=not untimed, backends=tuple(sorted(backends)), untimed=untimed)


def missing_reason(name: str, timing: RunTiming) -> str:
    """Why the metric `name` (a `summarize` key) has no value in a run with this timing."""
    if is_speed_metric(name) and not timing.timed:
        return timing.not_timed
    if name.startswith("speedup_"):
        return "n/a (no correct attempt)"
    if is_speed_metric(name):
        return "n/a (a correct attempt has no timing)"
    if name.startswith("pass@"):
        return "n/a (fewer samples per task than k)"
    return "n/a (no attempts)"


def explained(summary: Mapping[str, float | None], timing: RunTiming) -> dict[str, MetricValue]:
    """`summary` with every missing value replaced by its n/a text."""
    return {name: missing_reason(name, timing) if value is None else value for name, value in summary.items()}


def format_metric(value: MetricValue, percent: bool) -> str:
    """A metric for a table cell: a share as a percentage, a ratio with 3 decimals, an n/a text as is."""
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    return f"{100 * value:.1f}%" if percent else f"{value:.3f}"
