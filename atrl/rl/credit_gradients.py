"""Tier 1 of the credit experiment: compare advantage estimators on the same fixed rollouts.

Every estimator turns the same groups of episodes into rows (`build_rows`); the policy gradient
of each group's rows (on-policy, so the PPO ratio is 1 and the gradient is Σ A·∇log p over the
token mean) is compressed by a fixed count sketch of all trainable parameters, which preserves
inner products in expectation. That gradient is linear in the advantages, and every token of one
part of a segment (a turn's response, the summary written at its end) carries one advantage under
every estimator and credit; so each part's gradient is taken once (one forward per segment, one
backward per part) and every arm is a weighted sum of them: the arms cost no extra passes.
From the per-group gradients g_1..g_n:

- split-half agreement: the cosine between the mean gradients of two random halves of the groups,
  over many random splits (higher: the estimator's signal is more consistent across groups);
- signal-to-noise: the expected gradient's norm, corrected for the noise in ‖ḡ‖, in units of the
  mean gradient's standard error;
- the share of the gradient from segments ≥ 2 and from summary tokens: (g_part · g)/‖g‖²,
  summed over groups (parts of one gradient add up to 1).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from atrl.agent.records import Trajectory
from atrl.agent.trajectory_io import read_trajectories
from atrl.errors import UsageError
from atrl.rl.advantages import AdvantageOptions
from atrl.rl.rows import Row, build_rows, segment_token_advantages
from atrl.rl.update import autocast_context, collate, forward_logprobs

PARTS = ("all", "later_segments", "summaries")


def load_groups(run_dir: Path, group_size: int | None = None, steps: Sequence[int] | None = None) -> list[list[Trajectory]]:
    """Groups of fixed rollouts: an `atrl eval --out` directory (`trajectories.jsonl`: each task's
    samples are one group, or with `group_size` consecutive groups of that many, in sample order:
    more groups than tasks) or an `atrl train --out` directory (`trajectories/step_*.jsonl`,
    task-major groups of `group_size`)."""
    run_dir = Path(run_dir)
    if (run_dir / "trajectories.jsonl").exists():
        by_task: dict[str, list[Trajectory]] = {}
        for traj in read_trajectories(run_dir / "trajectories.jsonl"):
            by_task.setdefault(traj.task_id, []).append(traj)
        tasks = [sorted(g, key=lambda t: t.sample) for _, g in sorted(by_task.items())]
        if group_size is None:
            return [g for g in tasks if len(g) > 1]
        uneven = sorted({len(g) for g in tasks if len(g) % group_size})
        if uneven:
            raise UsageError(f"{run_dir}: tasks with {uneven} samples, not a multiple of group_size {group_size}",
                             "pass a group size that divides every task's samples")
        return [g[i : i + group_size] for g in tasks for i in range(0, len(g), group_size)]
    files = sorted((run_dir / "trajectories").glob("step_*.jsonl"))
    if steps is not None:
        files = [f for f in files if int(f.stem.split("_")[1]) in set(steps)]
    if not files:
        raise UsageError(f"{run_dir} has neither trajectories.jsonl nor trajectories/step_*.jsonl",
                         "point --run at an `atrl eval --out` or `atrl train --out` directory")
    if group_size is None:
        raise UsageError("a training run's trajectories need its group_size", "pass --group-size")
    groups: list[list[Trajectory]] = []
    for path in files:
        trajectories = list(read_trajectories(path))
        if len(trajectories) % group_size:
            raise UsageError(f"{path} holds {len(trajectories)} episodes, not a multiple of group_size {group_size}",
                             "pass the run's group_size")
        groups += [trajectories[i : i + group_size] for i in range(0, len(trajectories), group_size)]
    return groups


class CountSketch:
    """A fixed random map of all trainable parameters' gradients to `dim` numbers."""

    def __init__(self, model: torch.nn.Module, dim: int = 4096, seed: int = 0) -> None:
        self.dim = dim
        generator = torch.Generator().manual_seed(seed)
        self.maps = []
        for param in model.parameters():
            if param.requires_grad:
                n = param.numel()
                buckets = torch.randint(0, dim, (n,), generator=generator).to(param.device)
                signs = (torch.randint(0, 2, (n,), generator=generator) * 2 - 1).to(param.device, torch.float32)
                self.maps.append((param, buckets, signs))

    def __call__(self) -> torch.Tensor:
        out = torch.zeros(self.dim, dtype=torch.float64, device=self.maps[0][0].device if self.maps else "cpu")
        for param, buckets, signs in self.maps:
            if param.grad is not None:
                out.index_add_(0, buckets, (param.grad.reshape(-1).float() * signs).double())
        return out.cpu()


@dataclass(frozen=True)
class EstimatorArm:
    name: str
    estimator: str
    credit: str
    gamma: float = 1.0


@dataclass
class PartGradient:
    """The sketched gradient of −Σ log p over one part of one segment's trainable tokens: one
    turn's response, or the summary written at the segment's end. Under every estimator and credit
    all tokens of a part carry one advantage, so an estimator's gradient is Σ A_part · h_part / N."""

    trajectory: int
    segment: int
    positions: list[int]
    summary: bool
    sketch: torch.Tensor


def _token_parts(trajectory: Trajectory) -> list[tuple[list[int], list[list[int]]]]:
    """Per segment: (loss mask, the positions of each part). The rows' own rule
    (`segment_token_advantages`) tags every trainable token with its turn's number, so tokens of
    one tag are one part (a summary takes the next segment's first turn: never one of its own)."""
    tags = list(range(1, len(trajectory.turns) + 1))
    out = []
    for mask, tagged in segment_token_advantages(trajectory, tags, "turn", 1.0, mask_truncated=False):
        by_tag: dict[float, list[int]] = {}
        for position, (m, tag) in enumerate(zip(mask, tagged, strict=True)):
            if m:
                by_tag.setdefault(tag, []).append(position)
        out.append((mask, list(by_tag.values())))
    return out


def part_gradients(model: torch.nn.Module, group: Sequence[Trajectory], sketch: CountSketch, pad_id: int,
                   device: torch.device | str = "cpu", autocast: bool = False) -> tuple[dict, list[PartGradient]]:
    """Every part's sketched gradient in one group (one forward per segment, one backward per
    part), and each segment's loss mask by (trajectory, segment): what every estimator combines."""
    device = torch.device(device)
    masks: dict[tuple[int, int], list[int]] = {}
    parts: list[PartGradient] = []
    for t, trajectory in enumerate(group):
        for segment, (mask, positions) in zip(trajectory.segments, _token_parts(trajectory), strict=True):
            if not positions:
                continue
            masks[(t, segment.index)] = mask
            row = Row(list(segment.token_ids), mask, [0.0] * len(mask), [0.0] * len(mask), 0, t, segment.index)
            with autocast_context(device, autocast):
                logp, _, _ = forward_logprobs(model, collate([row], pad_id, device), 1.0)
            packed_index = {p: i for i, p in enumerate(p for p in range(1, len(mask)) if mask[p])}
            for n, where in enumerate(positions):
                model.zero_grad(set_to_none=True)
                (-logp[[packed_index[p] for p in where]].sum()).backward(retain_graph=n < len(positions) - 1)
                summary = segment.token_types[where[0]] == "summary"
                parts.append(PartGradient(t, segment.index, where, summary, sketch()))
    model.zero_grad(set_to_none=True)
    return masks, parts


def combine(masks: dict, parts: list[PartGradient], group: Sequence[Trajectory], arm: EstimatorArm,
            dim: int, options: AdvantageOptions | None = None) -> dict[str, torch.Tensor]:
    """One arm's sketched gradient of the group's token-mean PPO loss at ratio 1, whole and per part
    of `PARTS`: Σ A_part · h_part / N over its rows (zero when the group carries no signal)."""
    rows = build_rows([list(group)], arm.estimator, arm.credit, arm.gamma, options)
    out = {part: torch.zeros(dim, dtype=torch.float64) for part in PARTS}
    if not rows:
        return out
    advantages: dict[tuple[int, int], list[float]] = {}
    for row in rows:
        key = (row.trajectory_id, row.segment_index)
        if masks.get(key) != row.loss_mask:
            raise ValueError(f"{arm.name}: the loss mask of trajectory {key[0]}, segment {key[1]} differs "
                             "from the one the part gradients were taken on")
        advantages[key] = row.advantages
    total = sum(row.num_trainable for row in rows)
    for part in parts:
        values = {advantages[(part.trajectory, part.segment)][p] for p in part.positions}
        if len(values) != 1:
            raise ValueError(f"{arm.name}: tokens of one part carry different advantages {sorted(values)}")
        weighted = part.sketch * (values.pop() / total)
        out["all"] += weighted
        if part.segment >= 1:
            out["later_segments"] += weighted
        if part.summary:
            out["summaries"] += weighted
    return out


def estimator_gradients(model: torch.nn.Module, groups: list[list[Trajectory]], arms: Sequence[EstimatorArm],
                        sketch: CountSketch, pad_id: int, device: torch.device | str = "cpu", autocast: bool = False,
                        options: AdvantageOptions | None = None,
                        progress: Callable[[int], None] | None = None) -> dict[str, dict[str, torch.Tensor]]:
    """Per arm and part of `PARTS`, the sketched gradient of each group's rows: [n_groups, dim].
    The part gradients are taken once per group and shared by all arms."""
    out = {arm.name: {part: torch.zeros(len(groups), sketch.dim, dtype=torch.float64) for part in PARTS}
           for arm in arms}
    for g, group in enumerate(groups):
        masks, parts = part_gradients(model, group, sketch, pad_id, device, autocast)
        for arm in arms:
            for part, value in combine(masks, parts, group, arm, sketch.dim, options).items():
                out[arm.name][part][g] = value
        if progress is not None:
            progress(g + 1)
    return out


def _cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    denominator = float(a.norm() * b.norm())
    return float(a @ b) / denominator if denominator > 0 else 0.0


def split_half_cosines(grads: torch.Tensor, splits: int = 500, seed: int = 0) -> list[float]:
    """Cosines of the two halves' mean gradients over `splits` random halvings of the groups."""
    n = grads.shape[0]
    if n < 2:
        raise UsageError("split-half agreement needs at least 2 groups", "collect more episodes")
    rng = random.Random(seed)
    out = []
    for _ in range(splits):
        order = rng.sample(range(n), n)
        first, second = order[: n // 2], order[n // 2 : 2 * (n // 2)]
        out.append(_cosine(grads[first].mean(0), grads[second].mean(0)))
    return out


def _noise_of_sums(a: torch.Tensor, b: torch.Tensor) -> float:
    """How much (Σ a) · (Σ b) over n groups overstates E[Σ a] · E[Σ b] on average: n times the
    groups' covariance of a and b (their variance when a is b). 0 for a single group."""
    n = a.shape[0]
    return n * float(((a - a.mean(0)) * (b - b.mean(0))).sum()) / (n - 1) if n > 1 else 0.0


def signal_to_noise(grads: torch.Tensor) -> float:
    """The expected gradient's norm in units of the mean's standard error s, with
    s² = Σ‖g_i − ḡ‖² / (n(n−1)): sqrt(max(0, ‖ḡ‖²/s² − 1)). ‖ḡ‖² itself overstates ‖E g‖² by
    the noise, s² on average (in thousands of dimensions pure noise gives ‖ḡ‖/s ≈ 1, and a
    bootstrap resample more), so the noise is taken off: 0 means no signal beyond the noise."""
    total = grads.sum(0)
    noise = _noise_of_sums(grads, grads)  # n² s², as ‖Σ g‖² is n² ‖ḡ‖²
    if noise <= 0:
        return float("inf") if float(total.norm()) > 0 else 0.0
    return max(0.0, float(total @ total) / noise - 1.0) ** 0.5


def share(part: torch.Tensor, whole: torch.Tensor) -> float:
    """The share of the expected summed gradient that the part contributes, E[Σ part] · E[Σ whole] /
    ‖E[Σ whole]‖², with the groups' noise taken off both products as in `signal_to_noise`
    (`_noise_of_sums`): otherwise a noisy part would claim the share of the noise it carries.
    0 when no signal is left in the whole."""
    part_sum, whole_sum = part.sum(0), whole.sum(0)
    signal = float(whole_sum @ whole_sum) - _noise_of_sums(whole, whole)
    return (float(part_sum @ whole_sum) - _noise_of_sums(part, whole)) / signal if signal > 0 else 0.0


def bootstrap(values_of: Callable[[list[int]], float], n_groups: int, samples: int = 1000, seed: int = 0,
              level: float = 0.95, estimate: float | None = None) -> tuple[float, float]:
    """Percentile interval of `values_of(indices)` over groups resampled with replacement. With
    `estimate` (the statistic on all groups), the interval is moved by the bootstrap's bias
    (mean of the resampled values − `estimate`): a resample's mean gradient carries the sample's
    own noise on top of its own, so signal-to-noise comes out higher on resamples than on the
    sample, by an amount the resamples themselves measure."""
    rng = random.Random(seed)
    values = sorted(values_of([rng.randrange(n_groups) for _ in range(n_groups)]) for _ in range(samples))
    tail = (1 - level) / 2
    shift = sum(values) / samples - estimate if estimate is not None else 0.0
    return values[int(tail * (samples - 1))] - shift, values[int((1 - tail) * (samples - 1))] - shift
