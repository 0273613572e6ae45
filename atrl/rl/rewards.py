"""Scores → best-so-far → segment rewards → segment returns (ATRL-SPEC, "Rewards").

Pure functions over plain lists. A *unit* is what gets one return: a segment (`credit:
segment`, the default), a turn (`credit: turn`, as if compacted after every turn) or the whole
trajectory (`credit: trajectory`). `unit_of_turns` maps turns to units; everything below is the
same for every credit mode.

    B_k = max(B_{k-1}, max score of the turns of unit k),  B_0 = 0
    r_k = B_k − B_{k−1}                                    (Σ_k r_k = B_K = R)
    G_k = Σ_{k' ≥ k} γ^{k'−k} r_{k'},                      G_k = 0 for k past the trajectory's end
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Credit = Literal["trajectory", "segment", "turn"]
CREDITS: tuple[str, ...] = ("trajectory", "segment", "turn")


def best_so_far(
    turn_scores: Sequence[float], segment_of_turn: Sequence[int], num_segments: int | None = None
) -> list[float]:
    """Best score reached by the end of each segment.

    turn_scores: [T] harness score of each turn, in episode order.
    segment_of_turn: [T] 0-based segment index of each turn (non-decreasing).
    num_segments: K; defaults to 1 + the largest index (segments without turns carry B forward).
    Returns [K]: B_1 … B_K (list index k−1 holds B_k); B_0 = 0 is implied, so B_k ≥ 0.
    """
    if len(turn_scores) != len(segment_of_turn):
        raise ValueError(f"{len(turn_scores)} scores but {len(segment_of_turn)} segment indices")
    k_count = (
        num_segments if num_segments is not None else (max(segment_of_turn) + 1 if segment_of_turn else 0)
    )
    best_in = [float("-inf")] * k_count
    for score, k in zip(turn_scores, segment_of_turn, strict=True):
        if not 0 <= k < k_count:
            raise ValueError(f"turn in segment {k}, but there are {k_count} segments")
        best_in[k] = max(best_in[k], float(score))
    out: list[float] = []
    running = 0.0  # B_0
    for value in best_in:
        running = max(running, value)
        out.append(running)
    return out


def segment_rewards(best: Sequence[float]) -> list[float]:
    """r_k = B_k − B_{k−1} with B_0 = 0. best: [K] → [K]; the rewards sum to B_K."""
    out: list[float] = []
    previous = 0.0
    for value in best:
        out.append(float(value) - previous)
        previous = float(value)
    return out


def segment_returns(rewards: Sequence[float], gamma: float, length: int | None = None) -> list[float]:
    """Discounted returns G_k = r_k + γ·G_{k+1}. rewards: [K] → [length or K].

    `length` pads to a group's largest segment count with G = 0 for segments after the
    trajectory ended (nothing more is gained there).
    """
    if length is not None and length < len(rewards):
        raise ValueError(f"length {length} is shorter than the {len(rewards)} rewards")
    out = [0.0] * len(rewards)
    running = 0.0
    for k in range(len(rewards) - 1, -1, -1):
        running = float(rewards[k]) + gamma * running
        out[k] = running
    return out + [0.0] * ((length or len(rewards)) - len(rewards))


def unit_of_turns(segment_of_turn: Sequence[int], num_segments: int, credit: str) -> tuple[list[int], int]:
    """Credit units: the unit index of every turn and the number of units.

    segment: units are segments; turn: every turn is its own unit; trajectory: one unit.
    """
    if credit == "segment":
        return list(segment_of_turn), num_segments
    if credit == "turn":
        return list(range(len(segment_of_turn))), len(segment_of_turn)
    if credit == "trajectory":
        return [0] * len(segment_of_turn), 1
    raise ValueError(f"unknown credit {credit!r}; expected one of {', '.join(CREDITS)}")


def unit_returns(
    turn_scores: Sequence[float], segment_of_turn: Sequence[int], num_segments: int, credit: str, gamma: float
) -> tuple[float, list[float]]:
    """Outcome R = B_K and the returns of every credit unit of one trajectory."""
    units, count = unit_of_turns(segment_of_turn, num_segments, credit)
    best = best_so_far(turn_scores, units, count)
    outcome = best[-1] if best else 0.0
    return outcome, segment_returns(segment_rewards(best), gamma)
