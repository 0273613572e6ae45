"""Tier 1 of the credit experiment: compare advantage estimators on the same fixed rollouts.

Every estimator turns the same groups of episodes into rows (`build_rows`); the policy gradient
of each group's rows (on-policy, so the PPO ratio is 1 and the gradient is Σ A·∇log p over the
token mean) is compressed by a fixed count sketch of all trainable parameters, which preserves
inner products in expectation. From the per-group gradients g_1..g_n:

- split-half agreement: the cosine between the mean gradients of two random halves of the groups,
  over many random splits (higher: the estimator's signal is more consistent across groups);
- signal-to-noise: ‖ḡ‖ divided by the standard error of the mean gradient's norm;
- the share of the gradient from segments ≥ 2 and from summary tokens: (g_part · g)/‖g‖²,
  summed over groups (parts of one gradient add up to 1).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from atrl.agent.records import Trajectory
from atrl.agent.trajectory_io import read_trajectories
from atrl.errors import UsageError
from atrl.rl.advantages import AdvantageOptions
from atrl.rl.rows import Row, build_rows
from atrl.rl.update import LossConfig, accumulate_gradients, row_logprobs

PARTS = ("all", "later_segments", "summaries")


def load_groups(run_dir: Path, group_size: int | None = None, steps: Sequence[int] | None = None) -> list[list[Trajectory]]:
    """Groups of fixed rollouts: an `atrl eval --out` directory (`trajectories.jsonl`: each task's
    samples are one group) or an `atrl train --out` directory (`trajectories/step_*.jsonl`,
    task-major groups of `group_size`)."""
    run_dir = Path(run_dir)
    if (run_dir / "trajectories.jsonl").exists():
        by_task: dict[str, list[Trajectory]] = {}
        for traj in read_trajectories(run_dir / "trajectories.jsonl"):
            by_task.setdefault(traj.task_id, []).append(traj)
        return [sorted(g, key=lambda t: t.sample) for _, g in sorted(by_task.items()) if len(g) > 1]
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


def _restricted(rows: list[Row], groups_flat: list[Trajectory], part: str) -> list[Row]:
    """The rows with their loss mask cut to one part (token counts stay those of all rows)."""
    if part == "all":
        return rows
    out = []
    for row in rows:
        if part == "later_segments":
            mask = row.loss_mask if row.segment_index >= 1 else [0] * len(row.loss_mask)
        else:  # summaries: the summary a segment wrote at its end
            types = groups_flat[row.trajectory_id].segments[row.segment_index].token_types
            mask = [m if i < len(types) and types[i] == "summary" else 0 for i, m in enumerate(row.loss_mask)]
        out.append(replace(row, loss_mask=mask, advantages=[a if m else 0.0 for a, m in zip(row.advantages, mask, strict=True)]))
    return out


@dataclass(frozen=True)
class EstimatorArm:
    name: str
    estimator: str
    credit: str
    gamma: float = 1.0


def group_gradients(model: torch.nn.Module, groups: list[list[Trajectory]], arm: EstimatorArm, sketch: CountSketch,
                    pad_id: int, device: torch.device | str = "cpu", micro_batch_size: int = 8,
                    max_tokens: int | None = 16384, autocast: bool = False,
                    options: AdvantageOptions | None = None) -> dict[str, torch.Tensor]:
    """Per part, the sketched gradient of each group's rows: [n_groups, dim] (zero rows for
    groups without signal)."""
    loss_config = LossConfig(clip_low=0.2, clip_high=0.28, kl_beta=0.0, temperature=1.0, is_cap=None)
    out = {part: torch.zeros(len(groups), sketch.dim, dtype=torch.float64) for part in PARTS}
    for g, group in enumerate(groups):
        rows = build_rows([group], arm.estimator, arm.credit, arm.gamma, options)
        if not rows:
            continue
        for row, lps in zip(rows, row_logprobs(model, rows, pad_id, 1.0, micro_batch_size, max_tokens, device, autocast),
                            strict=True):
            row.old_logprobs = lps  # on-policy: ratio 1
        total = sum(r.num_trainable for r in rows)
        for part in PARTS:
            model.zero_grad(set_to_none=True)
            accumulate_gradients(model, _restricted(rows, list(group), part), loss_config, pad_id, micro_batch_size,
                                 max_tokens, total, device, autocast, with_entropy=False)
            out[part][g] = sketch()
    model.zero_grad(set_to_none=True)
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


def signal_to_noise(grads: torch.Tensor) -> float:
    """‖ḡ‖ / sqrt(Σ‖g_i − ḡ‖² / (n(n−1))): the mean gradient's norm in units of its standard error."""
    n = grads.shape[0]
    mean = grads.mean(0)
    spread = float(((grads - mean) ** 2).sum()) / (n * (n - 1)) if n > 1 else 0.0
    return float(mean.norm()) / spread**0.5 if spread > 0 else float("inf")


def share(part: torch.Tensor, whole: torch.Tensor) -> float:
    """(Σ part) · (Σ whole) / ‖Σ whole‖²: the share of the summed gradient the part contributes."""
    total = whole.sum(0)
    norm = float(total @ total)
    return float(part.sum(0) @ total) / norm if norm > 0 else 0.0


def bootstrap(values_of: Callable[[list[int]], float], n_groups: int, samples: int = 1000, seed: int = 0,
              level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of `values_of(indices)` over groups resampled with replacement."""
    rng = random.Random(seed)
    values = sorted(values_of([rng.randrange(n_groups) for _ in range(n_groups)]) for _ in range(samples))
    tail = (1 - level) / 2
    return values[int(tail * (samples - 1))], values[int((1 - tail) * (samples - 1))]
