"""Per-step training metrics: computed from trajectories, rows and loss statistics, appended to
`metrics.jsonl` (and TensorBoard when asked)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from atrl.agent.records import Trajectory
from atrl.errors import UsageError
from atrl.eval.breakdown import count_later_turns
from atrl.harness.feedback.failures import JUDGE_SIDE_CLASSES
from atrl.jsonio import Journal, read_journal
from atrl.rl.rows import Row, trajectory_returns

COMPILED_STAGES = ("correctness", "profile", "done")


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def rollout_metrics(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """Reward and harness statistics of a step's episodes. Rewards are trajectory outcomes
    (best score); rates are over all judged turns; speedup over the best turns that have one."""
    verdicts = [t.verdict for traj in trajectories for t in traj.turns if t.verdict is not None]
    best = [traj.best_score for traj in trajectories]
    speedups = []
    for traj in trajectories:
        if traj.best_turn is not None:
            verdict = traj.turns[traj.best_turn].verdict or {}
            timing = verdict.get("timing") or {}
            if timing.get("speedup") is not None:
                speedups.append(float(timing["speedup"]))
    return {
        "episodes": float(len(trajectories)),
        "reward_mean": _mean(best),
        "reward_max": max(best, default=0.0),
        "reward_std": statistics.pstdev(best) if len(best) > 1 else 0.0,
        "correct_rate": _mean([1.0 if v.get("ok") else 0.0 for v in verdicts]),
        "episode_solved_rate": _mean(
            [1.0 if any((t.verdict or {}).get("ok") for t in traj.turns) else 0.0 for traj in trajectories]
        ),
        "compile_rate": _mean([1.0 if v.get("stage") in COMPILED_STAGES else 0.0 for v in verdicts]),
        # turns the judge could not judge (left out of the update): a busy GPU, a failing task reference
        "device_busy_turns": float(sum(v.get("error_class") == "device-busy" for v in verdicts)),
        "judge_side_turns": float(sum(v.get("error_class") in JUDGE_SIDE_CLASSES for v in verdicts)),
        **later_turn_counts(trajectories),
        **later_segment_returns(trajectories),
        "speedup_mean": _mean(speedups),
        "turns_per_episode": _mean([len(traj.turns) for traj in trajectories]),
        "segments_per_episode": _mean([len(traj.segments) for traj in trajectories]),
        "multi_segment_fraction": _mean([1.0 if len(traj.segments) >= 2 else 0.0 for traj in trajectories]),
        "compactions_per_episode": _mean([traj.compactions for traj in trajectories]),
        "summary_fallbacks": float(sum(s.summary_fallback for traj in trajectories for s in traj.segments)),
        **summary_metrics(trajectories),
        "truncated_responses": float(
            sum(t.finish_reason == "length" for traj in trajectories for t in traj.turns)
        ),
        **judge_time_metrics(verdicts),
        # sampled tokens (responses and summaries: the ones with a log-prob)
        "tokens_generated": float(
            sum(lp is not None for traj in trajectories for seg in traj.segments for lp in seg.logprobs)
        ),
    }


def later_turn_counts(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """Among episodes with a second turn: first turns wrong and how many a later turn repaired;
    first turns right and how many the second turn kept right (counts, as the eval report's
    "Turns after the first"; best-so-far rewards do not see a right kernel broken)."""
    later = count_later_turns([[bool((t.verdict or {}).get("ok")) for t in traj.turns] for traj in trajectories])
    return {f"later_{name}": float(value) for name, value in asdict(later).items()}


def later_segment_returns(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """Segments after the first, and those whose segment return (γ = 1) is 0: the episode had
    already reached its best before them, so under the per-index leave-one-out baseline a
    segment that keeps a right kernel is pushed down (the estimator's known edge; counts, so
    that they add up over steps)."""
    returns = [g for traj in trajectories for g in trajectory_returns(traj, "segment", 1.0)[1][1:]]
    return {"later_segments": float(len(returns)), "later_zero_return_segments": float(sum(g == 0 for g in returns))}


JUDGE_STAGES = ("compile", "correctness", "profile", "device_wait")


def judge_time_metrics(verdicts: Sequence[dict]) -> dict[str, float]:
    """Where the step's judging time went: worker seconds per stage summed over the verdicts
    (`device_wait`: queueing for the GPU while another job was timed; the stage it happened in
    counts it too; `coverage`: the profile stage's torch.profiler call), and the share of verdicts
    answered from the cache."""
    totals = dict.fromkeys(JUDGE_STAGES, 0.0)
    for verdict in verdicts:
        for stage, seconds in (verdict.get("stage_seconds") or {}).items():
            if stage in totals:
                totals[stage] += float(seconds)
    # of the profile stage, the one candidate call under torch.profiler that measures coverage
    coverage = sum(float((v.get("timing") or {}).get("coverage_seconds") or 0.0) for v in verdicts)
    return {**{f"judge_{stage}_s": round(total, 3) for stage, total in totals.items()},
            "judge_coverage_s": round(coverage, 3),
            "judge_cached_fraction": _mean([1.0 if v.get("cached") else 0.0 for v in verdicts])}


def summary_metrics(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """Of the summaries written at compactions: the share a following segment carried (one that
    did not fit, or came after the last segment, was written for nothing and is masked) and the
    share the structured fallback replaced (the policy's summary was unusable)."""
    written = used = fallback = 0
    for traj in trajectories:
        for k, segment in enumerate(traj.segments):
            if segment.summary_text is None:
                continue
            written += 1
            fallback += segment.summary_fallback
            used += k + 1 < len(traj.segments)
    return {
        "summaries_written": float(written),
        "summary_used_fraction": used / written if written else 0.0,
        "summary_fallback_rate": fallback / written if written else 0.0,
    }


def compaction_warning(record: dict[str, Any], min_multi_segment_fraction: float | None) -> str | None:
    """The warning of a run meant to study compaction whose step had too few multi-segment
    episodes (ATRL-SPEC: fewer than 80% with ≥ 2 segments), or None."""
    if min_multi_segment_fraction is None or not record.get("episodes"):
        return None
    share = record["multi_segment_fraction"]
    if share >= min_multi_segment_fraction:
        return None
    return (f"only {share:.0%} of the step's episodes have ≥ 2 segments (wanted ≥ {min_multi_segment_fraction:.0%}): "
            "segment credit reduces to trajectory credit on the rest; compact more often "
            "(agent.turns_per_segment) or leave room for a fresh segment (agent.context_budget)")


def mismatch_metrics(rows: Sequence[Row]) -> dict[str, float]:
    """How far the trainer's log-probs (`old_logprobs`, its own forward before the update) are
    from the sampler's over the trainable tokens: mean and max |Δ log p| and the k3 estimate of
    KL(π_sampler ‖ π_trainer) = E_sampler[e^r − r − 1], r = log π_trainer − log π_sampler."""
    deltas = [
        old - sampled
        for r in rows
        if r.sampler_logprobs is not None
        for old, sampled, m in zip(r.old_logprobs, r.sampler_logprobs, r.loss_mask, strict=True)
        if m
    ]
    return {
        "mismatch_abs_mean": _mean([abs(d) for d in deltas]),
        "mismatch_abs_max": max((abs(d) for d in deltas), default=0.0),
        "mismatch_k3": _mean([math.exp(d) - d - 1.0 for d in deltas]),
    }


def segment_advantage_metrics(rows: Sequence[Row], max_index: int = 4) -> dict[str, float]:
    """Per segment index k (0-based, the last bucket holds k ≥ max_index − 1): rows, and the
    mean and mean |A| of the advantages of their trainable response and summary tokens."""
    out: dict[str, float] = {}
    for k in range(max_index):
        last = k == max_index - 1
        chosen = [r for r in rows if (r.segment_index >= k if last else r.segment_index == k)]
        adv = [a for r in chosen for a, m in zip(r.advantages, r.loss_mask, strict=True) if m]
        key = f"seg{k}" + ("+" if last else "")
        out[f"rows_{key}"] = float(len(chosen))
        out[f"adv_{key}_mean"] = _mean(adv)
        out[f"adv_{key}_abs_mean"] = _mean([abs(a) for a in adv])
    return out


def row_metrics(rows: Sequence[Row], groups: int) -> dict[str, float]:
    """Advantage and token statistics over the trainable tokens of the step's rows."""
    adv = [a for r in rows for a, m in zip(r.advantages, r.loss_mask, strict=True) if m]
    return {
        "groups": float(groups),
        "groups_kept": float(len({r.group_id for r in rows})),
        "rows": float(len(rows)),
        "tokens_trainable": float(len(adv)),
        "tokens_total": float(sum(len(r.token_ids) for r in rows)),
        "adv_mean": _mean(adv),
        "adv_std": statistics.pstdev(adv) if len(adv) > 1 else 0.0,
        "adv_min": min(adv, default=0.0),
        "adv_max": max(adv, default=0.0),
        "adv_nonzero_fraction": _mean([1.0 if a != 0 else 0.0 for a in adv]),
        **segment_advantage_metrics(rows),
    }


class MetricsLog:
    """Appends one record per step to `OUT/metrics.jsonl`; mirrors scalars to TensorBoard.
    With `write=False` (every data-parallel rank but 0) it touches no file."""

    def __init__(
        self, out_dir: str | Path, tensorboard: bool = False, resume_step: int = 0, write: bool = True
    ) -> None:
        self.path = Path(out_dir) / "metrics.jsonl"
        self.journal: Journal | None = None
        self.writer = None
        if not write:
            return
        _drop_records_after(self.path, resume_step)
        self.journal = Journal(self.path)
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as exc:
                raise UsageError(
                    "TensorBoard logging needs the tensorboard package",
                    "install the extra: pip install 'atrl[tensorboard]'",
                ) from exc
            self.writer = SummaryWriter(str(Path(out_dir) / "tensorboard"))

    def append(self, record: dict[str, Any]) -> None:
        if self.journal is None:
            return
        self.journal.append(record)
        if self.writer is not None:
            for key, value in record.items():
                if isinstance(value, (int, float)) and key != "step":
                    self.writer.add_scalar(key, value, record["step"])
            self.writer.flush()

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()
        if self.writer is not None:
            self.writer.close()


def _drop_records_after(path: Path, step: int) -> None:
    """On resume, forget steps past the checkpoint (they are recomputed identically)."""
    if not path.exists():
        return
    kept = [r for r in read_journal(path) if r.get("step", 0) <= step]
    path.with_suffix(".tmp").unlink(missing_ok=True)
    with Journal(path.with_suffix(".tmp")) as journal:
        for record in kept:
            journal.append(record)
    path.with_suffix(".tmp").replace(path)
