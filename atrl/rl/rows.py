"""Token rows: one training row per segment, with a loss mask and an advantage per token.

A segment is its own context, so it is its own row (ATRL-SPEC, "Compaction"). Only tokens the
policy sampled train — a trainable type (`response`, `summary`) with a recorded log-prob: the
responses and the summary the policy wrote at the end of the segment; prompt, task, feedback, knowledge-base text, instructions, the carried
best kernel and the summary carried in from the previous segment are masked.

Per token of segment k of trajectory i (unit = segment, turn or trajectory, per `credit`):
- response tokens of turn t get A_{i, unit(t)};
- summary tokens written at the end of segment k get γ · A_{i, unit(first turn of segment k+1)};
  the last segment's summary (nothing follows it) is masked, as is a summary the structured
  fallback replaced (the policy did not write it);
- with `mask_truncated`, responses cut at the token limit (`finish_reason == "length"`) are masked.
Groups whose trainable tokens all have advantage 0 carry no signal and are dropped.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from atrl.agent.records import TRAINABLE_TYPES, Segment, Trajectory
from atrl.rl.advantages import AdvantageOptions, get_estimator
from atrl.rl.rewards import unit_of_turns, unit_returns


@dataclass
class Row:
    """One segment's context as a training row. All per-token lists have length T.

    token_ids: [T] the segment's final context; loss_mask: [T] 1 where the token trains;
    advantages: [T] (0 where masked); sampler_logprobs: [T] the log-probs recorded at generation
    (0.0 where none was recorded); old_logprobs: [T] the PPO ratio's denominator — a copy of
    the sampler's until the trainer replaces it with its own forward under the weights before the
    update (`Trainer._score_rows`), keeping the sampler's for the mismatch and its correction.
    """

    token_ids: list[int]
    loss_mask: list[int]
    advantages: list[float]
    old_logprobs: list[float]
    group_id: int
    trajectory_id: int
    segment_index: int
    task_id: str = ""
    summary_fallback: bool = False
    ref_logprobs: list[float] | None = field(default=None, repr=False)
    sampler_logprobs: list[float] | None = field(default=None, repr=False)

    @property
    def num_trainable(self) -> int:
        return sum(self.loss_mask)


def trajectory_returns(trajectory: Trajectory, credit: str, gamma: float) -> tuple[float, list[float]]:
    """Outcome R and the returns of each credit unit of one trajectory."""
    scores = [turn.score for turn in trajectory.turns]
    segment_of_turn = [turn.segment for turn in trajectory.turns]
    return unit_returns(scores, segment_of_turn, len(trajectory.segments), credit, gamma)


def group_advantages(
    group: Sequence[Trajectory], estimator: str, credit: str, gamma: float, options: AdvantageOptions
) -> list[list[float]]:
    """Advantages [G][units_i] of one group, by the named estimator."""
    outcomes, returns = (
        zip(*(trajectory_returns(t, credit, gamma) for t in group), strict=True) if group else ((), ())
    )
    return get_estimator(estimator)(list(outcomes), [list(r) for r in returns], options)


def _sampled(segment: Segment, position: int) -> bool:
    """Sampled in this segment: a trainable type *and* a recorded log-prob. Template scaffolding
    around a sampled message and a summary carried in from the previous segment have none."""
    return segment.token_types[position] in TRAINABLE_TYPES and segment.logprobs[position] is not None


def _written_summary_positions(segment: Segment) -> list[int]:
    """Positions of the summary the policy wrote at the end of this segment (not a carried one)."""
    if segment.summary_text is None:
        return []
    return [p for p, t in enumerate(segment.token_types) if t == "summary" and _sampled(segment, p)]


def segment_token_advantages(
    trajectory: Trajectory, unit_advantages: Sequence[float], credit: str, gamma: float, mask_truncated: bool
) -> list[tuple[list[int], list[float]]]:
    """(loss_mask [T_k], advantages [T_k]) for every segment k of one trajectory."""
    segment_of_turn = [turn.segment for turn in trajectory.turns]
    units, _ = unit_of_turns(segment_of_turn, len(trajectory.segments), credit)
    first_unit_of_segment: dict[int, int] = {}
    for turn, unit in zip(trajectory.turns, units, strict=True):
        first_unit_of_segment.setdefault(turn.segment, unit)

    out: list[tuple[list[int], list[float]]] = []
    for k, segment in enumerate(trajectory.segments):
        size = len(segment.token_ids)
        mask, adv = [0] * size, [0.0] * size
        for turn, unit in zip(trajectory.turns, units, strict=True):
            if turn.segment != k or (mask_truncated and turn.finish_reason == "length"):
                continue
            for p in range(turn.response_start, min(turn.response_end, size)):
                if _sampled(segment, p):
                    mask[p], adv[p] = 1, float(unit_advantages[unit])
        next_unit = first_unit_of_segment.get(k + 1)
        if next_unit is not None and not segment.summary_fallback:
            for p in _written_summary_positions(segment):
                mask[p], adv[p] = 1, gamma * float(unit_advantages[next_unit])
        out.append((mask, adv))
    return out


def permuted_within_sizes(advantages: list[list[float]], rng: random.Random) -> list[list[float]]:
    """The group's advantage vectors handed out again at random among the trajectories with the
    same number of credit units (a vector fits only a trajectory of its length)."""
    out = list(advantages)
    by_size: dict[int, list[int]] = {}
    for index, vector in enumerate(advantages):
        by_size.setdefault(len(vector), []).append(index)
    for indices in by_size.values():
        shuffled = indices[:]
        rng.shuffle(shuffled)
        for target, source in zip(indices, shuffled, strict=True):
            out[target] = advantages[source]
    return out


def build_rows(
    groups: Sequence[Sequence[Trajectory]],
    estimator: str,
    credit: str = "segment",
    gamma: float = 1.0,
    options: AdvantageOptions | None = None,
    mask_truncated: bool = False,
    permute: random.Random | None = None,
) -> list[Row]:
    """Rows for a step: every segment of every trajectory of every group that carries signal.

    groups: one sequence of trajectories per task of the step. Rows without trainable tokens and
    groups whose trainable tokens all have advantage 0 are left out. `trajectory_id` numbers the
    trajectories of the step in order (group by group). `permute` (a control arm): each group's
    advantages are permuted among its trajectories with this generator, so the update has the
    real advantages' sizes and no relation to what the tokens earned.
    """
    options = options or AdvantageOptions()
    rows: list[Row] = []
    trajectory_id = 0
    for group_id, group in enumerate(groups):
        advantages = group_advantages(group, estimator, credit, gamma, options)
        if permute is not None:
            advantages = permuted_within_sizes(advantages, permute)
        group_rows: list[Row] = []
        for trajectory, unit_adv in zip(group, advantages, strict=True):
            per_segment = segment_token_advantages(trajectory, unit_adv, credit, gamma, mask_truncated)
            for segment, (mask, adv) in zip(trajectory.segments, per_segment, strict=True):
                if not any(mask):
                    continue
                sampled = [lp if lp is not None else 0.0 for lp in segment.logprobs] or [0.0] * len(
                    segment.token_ids
                )
                group_rows.append(
                    Row(
                        token_ids=list(segment.token_ids),
                        loss_mask=mask,
                        advantages=adv,
                        old_logprobs=list(sampled),
                        group_id=group_id,
                        trajectory_id=trajectory_id,
                        segment_index=segment.index,
                        task_id=trajectory.task_id,
                        summary_fallback=segment.summary_fallback,
                        sampler_logprobs=sampled,
                    )
                )
            trajectory_id += 1
        if any(
            a != 0.0 for row in group_rows for a, m in zip(row.advantages, row.loss_mask, strict=True) if m
        ):
            rows.extend(group_rows)
    return rows
