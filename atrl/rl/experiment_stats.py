"""Statistics of the credit experiment: per-run areas under a learning curve, and tests between
arms that assume no distribution (few seeds: exact permutation tests and a bootstrap interval).

- `curve_area`: the mean of a per-step metric over steps 1..T (the area under the curve divided by
  T), the per-seed endpoint.
- `permutation_test`: two-sided exact test of a difference in means between two groups of seeds
  (every relabelling when there are at most `exact_limit`, else a seeded Monte-Carlo sample).
- `sign_flip_test`: two-sided test of paired differences (seeds or steps pair the arms), exact
  up to `exact_limit` flips, else sampled; with n pairs its smallest exact p-value is 2 / 2**n.
- `bootstrap_ci`: percentile interval of the difference in means, resampling seeds within arms.
- `cluster_bootstrap_ci`: the same for rates measured per seed and task (tier 3's held-out solved
  rate): tasks resampled once per draw for both arms (they share the tasks), seeds within arms.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Sequence


def curve_area(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("an empty curve has no area")
    return sum(values) / len(values)


def _mean_difference(a: Sequence[float], b: Sequence[float]) -> float:
    return statistics.fmean(a) - statistics.fmean(b)


def permutation_test(a: Sequence[float], b: Sequence[float], exact_limit: int = 200_000,
                     samples: int = 100_000, seed: int = 0) -> float:
    """P(|mean(A') - mean(B')| >= |observed|) over relabellings of the pooled values."""
    if not a or not b:
        raise ValueError("both groups need at least one value")
    pooled, n = list(a) + list(b), len(a)
    observed = abs(_mean_difference(a, b)) - 1e-12
    total = math.comb(len(pooled), n)
    if total <= exact_limit:
        hits = 0
        for chosen in itertools.combinations(range(len(pooled)), n):
            picked = set(chosen)
            left = [pooled[i] for i in chosen]
            right = [pooled[i] for i in range(len(pooled)) if i not in picked]
            hits += abs(_mean_difference(left, right)) >= observed
        return hits / total
    rng = random.Random(seed)
    hits = 0
    for _ in range(samples):
        shuffled = rng.sample(pooled, len(pooled))
        hits += abs(_mean_difference(shuffled[:n], shuffled[n:])) >= observed
    return (hits + 1) / (samples + 1)


def sign_flip_test(differences: Sequence[float], exact_limit: int = 2**20, samples: int = 200_000,
                   seed: int = 0) -> float:
    """P(|mean of sign-flipped differences| >= |observed mean|): exact over all 2**n flips when
    there are at most `exact_limit`, else over a seeded Monte-Carlo sample of flips."""
    if not differences:
        raise ValueError("no paired differences")
    observed = abs(statistics.fmean(differences)) - 1e-12
    if 2 ** len(differences) <= exact_limit:
        hits = 0
        for signs in itertools.product((1.0, -1.0), repeat=len(differences)):
            hits += abs(statistics.fmean(s * d for s, d in zip(signs, differences, strict=True))) >= observed
        return hits / 2 ** len(differences)
    rng = random.Random(seed)
    hits = sum(abs(statistics.fmean(d if rng.random() < 0.5 else -d for d in differences)) >= observed
               for _ in range(samples))
    return (hits + 1) / (samples + 1)


def bootstrap_ci(a: Sequence[float], b: Sequence[float], level: float = 0.95, samples: int = 20_000,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile interval of mean(A) - mean(B), resampling each arm's seeds with replacement."""
    if not a or not b:
        raise ValueError("both groups need at least one value")
    rng = random.Random(seed)
    diffs = sorted(
        _mean_difference(rng.choices(a, k=len(a)), rng.choices(b, k=len(b))) for _ in range(samples)
    )
    tail = (1.0 - level) / 2
    return diffs[int(tail * (samples - 1))], diffs[int((1.0 - tail) * (samples - 1))]


def cluster_bootstrap_ci(a: dict[int, dict[str, float]], b: dict[int, dict[str, float]], level: float = 0.95,
                         samples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Percentile interval of mean(A) − mean(B) where each arm maps seed → {task: rate}: each draw
    resamples the tasks both arms share (the same draw for both) and each arm's seeds."""
    tasks = sorted(set.intersection(*(set(per_task) for per_task in (*a.values(), *b.values()))))
    if not tasks or not a or not b:
        raise ValueError("both arms need seeds that share at least one task")
    rng = random.Random(seed)
    seeds_a, seeds_b = sorted(a), sorted(b)

    def arm_mean(arm: dict[int, dict[str, float]], seeds: list[int], drawn: list[str]) -> float:
        return statistics.fmean(arm[s][t] for s in rng.choices(seeds, k=len(seeds)) for t in drawn)

    diffs = []
    for _ in range(samples):
        drawn = rng.choices(tasks, k=len(tasks))
        diffs.append(arm_mean(a, seeds_a, drawn) - arm_mean(b, seeds_b, drawn))
    diffs.sort()
    tail = (1.0 - level) / 2
    return diffs[int(tail * (samples - 1))], diffs[int((1.0 - tail) * (samples - 1))]
