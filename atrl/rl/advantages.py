"""Advantage estimators: a registry of pure functions over one group (ATRL-SPEC, "Advantages").

A *group* is the G trajectories sampled for one task in one step. Every estimator takes

    outcomes: [G]        R_i = B_K of trajectory i (its best score)
    returns:  [G][K_i]   G_{i,k}, the return of credit unit k of trajectory i (ragged)
    options:  AdvantageOptions

and returns advantages shaped like `returns` ([G][K_i]): one value per credit unit. The trainer
looks an estimator up by the name in its config (`get_estimator(config.estimator)`).

No estimator produces NaN: a group of one, ragged unit counts and all-equal rewards give
finite values (zeros where there is nothing to compare against).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from atrl.errors import UsageError


@dataclass(frozen=True)
class AdvantageOptions:
    """Knobs shared by the estimators."""

    eps: float = 1e-6  # added to a standard deviation before dividing by it
    atrl_scale: str = "none"  # "none": D = 1; "std": D = group std of G at that unit index + eps
    omega: float = 1.0  # weight of the atrl term in atrl_hybrid


Estimator = Callable[[Sequence[float], Sequence[Sequence[float]], AdvantageOptions], list[list[float]]]
_ESTIMATORS: dict[str, Estimator] = {}


def register_estimator(name: str) -> Callable[[Estimator], Estimator]:
    """Decorator: make `fn` available as `get_estimator(name)`."""

    def decorate(fn: Estimator) -> Estimator:
        if name in _ESTIMATORS:
            raise ValueError(f"estimator {name!r} is registered twice")
        _ESTIMATORS[name] = fn
        return fn

    return decorate


def get_estimator(name: str) -> Estimator:
    if name not in _ESTIMATORS:
        raise UsageError(
            f"unknown advantage estimator {name!r}", f"use one of: {', '.join(estimator_names())}"
        )
    return _ESTIMATORS[name]


def estimator_names() -> list[str]:
    return sorted(_ESTIMATORS)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _std(values: Sequence[float]) -> float:
    """Sample standard deviation (Bessel-corrected, as `torch.std`); 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    mu = _mean(values)
    return math.sqrt(sum((v - mu) ** 2 for v in values) / (len(values) - 1))


def _centred(values: Sequence[float]) -> list[float]:
    """Values minus the first one. Estimators are invariant to a common shift; subtracting an
    exact member first makes equal values give exactly zero (float sums of equal values need not
    average back to the value itself)."""
    return [float(v) - float(values[0]) for v in values]


def _broadcast(per_trajectory: Sequence[float], returns: Sequence[Sequence[float]]) -> list[list[float]]:
    return [[float(a)] * len(units) for a, units in zip(per_trajectory, returns, strict=True)]


@register_estimator("grpo")
def grpo(
    outcomes: Sequence[float], returns: Sequence[Sequence[float]], options: AdvantageOptions
) -> list[list[float]]:
    """GRPO (Shao et al. 2024, DeepSeekMath): A_i = (R_i − mean R) / (std R + ε), copied to every unit.

    outcomes [G], returns [G][K_i] (only their shape is used) → [G][K_i].
    """
    if not outcomes:
        return []
    centred = _centred(outcomes)
    mu, sd = _mean(centred), _std(centred)
    return _broadcast([(r - mu) / (sd + options.eps) for r in centred], returns)


@register_estimator("drgrpo")
def drgrpo(
    outcomes: Sequence[float], returns: Sequence[Sequence[float]], options: AdvantageOptions
) -> list[list[float]]:
    """Dr. GRPO (Liu et al. 2025, "Understanding R1-Zero-Like Training"): A_i = R_i − mean R.

    outcomes [G], returns [G][K_i] (only their shape is used) → [G][K_i].
    """
    if not outcomes:
        return []
    centred = _centred(outcomes)
    mu = _mean(centred)
    return _broadcast([r - mu for r in centred], returns)


@register_estimator("atrl")
def atrl(
    outcomes: Sequence[float], returns: Sequence[Sequence[float]], options: AdvantageOptions
) -> list[list[float]]:
    """ATRL segment-level leave-one-out: A_{i,k} = (G_{i,k} − mean_{j≠i} G_{j,k}) / D.

    The baseline at unit index k averages over *all* other trajectories of the group, with
    G_{j,k} = 0 for a trajectory j that ended before k (it gains nothing more there). Hence the
    advantages at index k sum to zero over the group (counting the padded zeros), and exactly over
    the trajectories present when every one reaches k (invariant 5). A leave-one-out baseline
    (RLOO, Ahmadian et al. 2024) keeps a trajectory's own return out of its baseline.
    D = 1 (`atrl_scale: none`) or the group's standard deviation of G_{·,k} + ε (`std`).
    A group of one has no baseline: its advantages are 0.

    outcomes [G] (unused), returns [G][K_i] → [G][K_i].
    """
    n = len(returns)
    if n < 2:
        return [[0.0] * len(units) for units in returns]
    width = max(len(units) for units in returns)
    padded = [list(units) + [0.0] * (width - len(units)) for units in returns]
    out = [[0.0] * len(units) for units in returns]
    for k in range(width):
        column = _centred([row[k] for row in padded])
        total = sum(column)
        scale = _std(column) + options.eps if options.atrl_scale == "std" else 1.0
        for i, units in enumerate(returns):
            if k < len(units):
                baseline = (total - column[i]) / (n - 1)
                out[i][k] = (column[i] - baseline) / scale
    return out


@register_estimator("atrl_hybrid")
def atrl_hybrid(
    outcomes: Sequence[float], returns: Sequence[Sequence[float]], options: AdvantageOptions
) -> list[list[float]]:
    """A = A_grpo + ω · A_atrl: the trajectory-level GRPO signal plus segment-level credit.

    outcomes [G], returns [G][K_i] → [G][K_i].
    """
    base = grpo(outcomes, returns, options)
    local = atrl(outcomes, returns, options)
    return [
        [b + options.omega * a for b, a in zip(bs, as_, strict=True)]
        for bs, as_ in zip(base, local, strict=True)
    ]
