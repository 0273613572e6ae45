"""Metrics the field reports, as pure functions over per-attempt outcomes.

An *attempt* is one (task, sample) episode reduced to one verdict — its best turn or its last
turn. KernelBench's fast_p is the share of **all** attempts that are correct and faster than
p× the reference (strict `>`); the `≥` variant is reported beside it. Speedup means are over
correct attempts only, except the failure-aware geometric mean, which counts every failed
attempt as 1× (labelled as such wherever shown). pass@k uses the unbiased estimator of Chen et
al. (2021). NPUKernelBench's acceptance is the share of tasks correct with speedup ≥ 0.6 / 0.8.

Speed metrics (fast_p, speedup means, NPU acceptance) depend on the backend, not only on the
data: `summarize(..., timed=False)` leaves them all None for a backend that cannot time, whether
or not any attempt was correct, so one backend never reads 0% in one run and unknown in another.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

FAST_P_THRESHOLDS: tuple[float, ...] = (0.0, 0.8, 1.0, 1.2, 1.5, 2.0)
NPU_ACCEPTANCE: tuple[float, ...] = (0.6, 0.8)
SPEED_METRIC_PREFIXES: tuple[str, ...] = ("fast_", "speedup_", "npu_accept_")


def is_speed_metric(name: str) -> bool:
    """True for the `summarize` keys that need a timed backend."""
    return name.startswith(SPEED_METRIC_PREFIXES)


@dataclass(frozen=True)
class Attempt:
    """One episode's outcome. `speedup` is None when the backend does not time (interpreter)."""

    task_id: str
    level: int
    sample: int
    compiled: bool
    correct: bool
    speedup: float | None = None


def _rate(flags: Iterable[bool]) -> float | None:
    flags = list(flags)
    return sum(flags) / len(flags) if flags else None


def compile_rate(attempts: Sequence[Attempt]) -> float | None:
    return _rate(a.compiled for a in attempts)


def correctness_rate(attempts: Sequence[Attempt]) -> float | None:
    return _rate(a.correct for a in attempts)


def timed(attempts: Sequence[Attempt]) -> bool:
    """True when every correct attempt has a measured speedup (a timed backend)."""
    correct = [a for a in attempts if a.correct]
    return bool(correct) and all(a.speedup is not None for a in correct)


def fast_p(attempts: Sequence[Attempt], p: float, inclusive: bool = False) -> float | None:
    """Share of all attempts that are correct and have speedup > p (≥ p when `inclusive`).

    None when there are no attempts or correct attempts lack timing (speedup unavailable)."""
    if not attempts or (any(a.correct for a in attempts) and not timed(attempts)):
        return None
    if not any(a.correct for a in attempts):
        return 0.0
    hits = [
        a.correct and a.speedup is not None and (a.speedup >= p if inclusive else a.speedup > p)
        for a in attempts
    ]
    return sum(hits) / len(attempts)


def geometric_mean(values: Sequence[float]) -> float | None:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def speedup_summary(attempts: Sequence[Attempt]) -> dict[str, float | None]:
    """geomean / mean / median speedup over correct attempts, and the failure-aware geomean
    (every attempt counted, failures as 1×). All None without timing."""
    if not timed(attempts):
        return {"geomean": None, "mean": None, "median": None, "geomean_failures_as_1x": None}
    speedups = [a.speedup for a in attempts if a.correct and a.speedup is not None]
    with_failures = [a.speedup if (a.correct and a.speedup is not None) else 1.0 for a in attempts]
    return {
        "geomean": geometric_mean(speedups),
        "mean": statistics.fmean(speedups) if speedups else None,
        "median": statistics.median(speedups) if speedups else None,
        "geomean_failures_as_1x": geometric_mean(with_failures),
    }


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: probability that at least one of k draws from n samples (c correct) is
    correct, 1 − C(n−c, k) / C(n, k). Requires 1 ≤ k ≤ n."""
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mean_pass_at_k(attempts: Sequence[Attempt], k: int) -> float | None:
    """pass@k averaged over tasks; tasks with fewer than k samples are left out."""
    by_task: dict[str, list[Attempt]] = {}
    for a in attempts:
        by_task.setdefault(a.task_id, []).append(a)
    values = [
        pass_at_k(len(group), sum(a.correct for a in group), k) for group in by_task.values() if len(group) >= k
    ]
    return statistics.fmean(values) if values else None


def npu_acceptance(attempts: Sequence[Attempt], threshold: float) -> float | None:
    """NPUKernelBench acceptance: share of attempts correct with speedup ≥ threshold."""
    return fast_p(attempts, threshold, inclusive=True)


def summarize(attempts: Sequence[Attempt], ks: Sequence[int] = (1,), timed: bool = True) -> dict[str, float | None]:
    """Every headline metric for one set of attempts, as a flat dict; with `timed=False` (a
    backend that cannot time) every speed metric is None."""
    out: dict[str, float | None] = {
        "attempts": float(len(attempts)),
        "tasks": float(len({a.task_id for a in attempts})),
        "compile_rate": compile_rate(attempts),
        "correctness": correctness_rate(attempts),
    }
    for p in FAST_P_THRESHOLDS:
        out[f"fast_{p:g}"] = fast_p(attempts, p)
        out[f"fast_{p:g}_ge"] = fast_p(attempts, p, inclusive=True)
    out.update({f"speedup_{k}": v for k, v in speedup_summary(attempts).items()})
    for k in ks:
        out[f"pass@{k}"] = mean_pass_at_k(attempts, k)
    for t in NPU_ACCEPTANCE:
        out[f"npu_accept_{t:g}"] = npu_acceptance(attempts, t)
    if not timed:
        out.update({name: None for name in out if is_speed_metric(name)})
    return out


def by_level(attempts: Sequence[Attempt], ks: Sequence[int] = (1,),
             timed: bool = True) -> dict[int, dict[str, float | None]]:
    levels = sorted({a.level for a in attempts})
    return {lvl: summarize([a for a in attempts if a.level == lvl], ks, timed) for lvl in levels}
