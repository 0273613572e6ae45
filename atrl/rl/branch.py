"""Re-sample one turn of recorded episodes from the exact context the policy saw, and judge it.

A recorded trajectory holds every segment's token ids, so the prompt of turn `t` is its
segment's tokens up to the turn's response: after a compaction that is the policy's own summary
and the previous verdict's feedback. `branch_run` asks the policy for `samples` new responses to
that prompt (more after a failed turn `t - 1` than after a right one: repairs are the rare
event), judges each with the harness, and writes each as a trajectory that ends at turn `t`:
the original's earlier turns and the new response with its verdict. Their ok turns are
rejection-sampled SFT data for second turns drawn from the policy's own failures
(`atrl sft` with `trajectories: [OUT]`), and the table of outcomes estimates the policy's
repair and keep rates from many samples per context.

The run is append-only (`OUT/trajectories.jsonl`, `OUT/branches.jsonl`): started again on the
same OUT it skips the branches already written.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atrl.agent.records import Span, Trajectory, Turn
from atrl.agent.trajectory_io import read_trajectories
from atrl.errors import UsageError
from atrl.harness.verdict import Verdict
from atrl.jsonio import Journal, read_journal, to_jsonable
from atrl.policy.base import GenerationRequest, SamplingParams
from atrl.tasks.task import Task

TRAJECTORIES_FILE = "trajectories.jsonl"
BRANCHES_FILE = "branches.jsonl"


@dataclass(frozen=True)
class BranchPoint:
    """Turn `turn` of a recorded trajectory, with whether the turn before it was judged ok."""

    trajectory: Trajectory
    turn: int
    after_ok: bool

    @property
    def key(self) -> tuple[str, int]:
        return self.trajectory.task_id, self.trajectory.sample

    def prompt_ids(self) -> list[int]:
        turn = self.trajectory.turns[self.turn]
        return list(self.trajectory.segments[turn.segment].token_ids[: turn.response_start])


def branch_points(trajectories: Iterable[Trajectory], turn: int) -> list[BranchPoint]:
    """The trajectories that reached turn `turn` (≥ 1), each once."""
    if turn < 1:
        raise UsageError(f"--turn {turn}: a branch needs an earlier turn to follow", "use --turn 1 or later")
    points, seen = [], set()
    for traj in trajectories:
        if len(traj.turns) <= turn or (traj.task_id, traj.sample) in seen:
            continue
        seen.add((traj.task_id, traj.sample))
        points.append(BranchPoint(traj, turn, bool((traj.turns[turn - 1].verdict or {}).get("ok"))))
    return points


def branched_trajectory(point: BranchPoint, token_ids: list[int], text: str, finish_reason: str,
                        verdict: Verdict, logprobs: list[float] | None = None) -> Trajectory:
    """The recorded trajectory up to `point.turn`, with this response and verdict as that turn;
    later turns and segments are dropped, best score and turn recomputed."""
    traj = copy.deepcopy(point.trajectory)
    old = traj.turns[point.turn]
    seg = traj.segments[old.segment]
    start = old.response_start
    lps: list[float | None] = list(logprobs) if logprobs is not None and len(logprobs) == len(token_ids) \
        else [None] * len(token_ids)
    seg.token_ids = seg.token_ids[:start] + list(token_ids)
    seg.token_types = seg.token_types[:start] + ["response"] * len(token_ids)
    seg.logprobs = seg.logprobs[:start] + lps
    seg.spans = [s for s in seg.spans if s.end <= start] + [Span("response", start, start + len(token_ids),
                                                                  point.turn)]
    seg.turns = [i for i in seg.turns if i <= point.turn]
    seg.summary_text, seg.summary_fallback = None, False
    traj.segments = traj.segments[: old.segment + 1]
    traj.turns = traj.turns[: point.turn] + [Turn(
        index=point.turn, segment=old.segment, response_text=text, response_start=start,
        response_end=start + len(token_ids), finish_reason=finish_reason, verdict=to_jsonable(verdict),
        score=float(verdict.score), feedback_text=verdict.feedback)]
    best = max(traj.turns, key=lambda t: (t.score, t.index))
    traj.best_score, traj.best_turn = best.score, best.index
    traj.stop_reason = "branch"
    return traj


@dataclass
class BranchSummary:
    """Outcomes by whether the turn before was ok: `branches[after_ok]`, `ok[after_ok]`, and
    contexts with at least one ok branch."""

    branches: Counter
    ok: Counter
    contexts: Counter
    contexts_with_ok: Counter

    def rate(self, after_ok: bool) -> float | None:
        return self.ok[after_ok] / self.branches[after_ok] if self.branches[after_ok] else None


def summarize(records: Iterable[dict]) -> BranchSummary:
    """The counts of `OUT/branches.jsonl` records."""
    branches, ok, by_context = Counter(), Counter(), {}
    for r in records:
        after = bool(r["after_ok"])
        branches[after] += 1
        ok[after] += bool(r["ok"])
        key = (r["task_id"], r["sample"])
        by_context[key] = (after, by_context.get(key, (after, False))[1] or bool(r["ok"]))
    contexts = Counter(after for after, _ in by_context.values())
    with_ok = Counter(after for after, any_ok in by_context.values() if any_ok)
    return BranchSummary(branches, ok, contexts, with_ok)


def branch_run(
    policy: Any,
    judge: Callable[[Task, str], Any],
    points: list[BranchPoint],
    tasks: dict[str, Task],
    out: str | Path,
    samples_after_failed: int,
    samples_after_ok: int,
    params: SamplingParams,
    batch_size: int = 64,
    on_batch: Callable[[int, int], None] | None = None,
) -> BranchSummary:
    """Write `samples_after_failed` (`samples_after_ok`) branches of each point whose previous
    turn failed (was ok) to OUT, skipping those already there. `judge(task, response)` returns a
    future of the verdict (`Harness.submit`), so a batch's judging overlaps the next generation.
    `on_batch(done, total)` reports progress. Returns the counts over everything in OUT."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    done = {(r["task_id"], r["sample"], r["branch"]) for r in read_journal(out / BRANCHES_FILE)}
    work = [(p, k) for p in points for k in range(samples_after_ok if p.after_ok else samples_after_failed)
            if (p.trajectory.task_id, p.trajectory.sample, k) not in done]
    missing = sorted({p.trajectory.task_id for p, _ in work} - set(tasks))
    if missing:
        raise UsageError(f"the recorded run has tasks this suite lacks: {', '.join(missing[:5])}",
                         "pass --path with the suite checkout the run was made on")
    total, finished = len(work), 0
    with Journal(out / TRAJECTORIES_FILE) as trajectories, Journal(out / BRANCHES_FILE) as branches:
        pending: list[tuple[BranchPoint, int, Any, Any]] = []

        def flush() -> None:
            nonlocal finished
            for point, k, gen, future in pending:
                verdict = future.result()
                traj = branched_trajectory(point, list(gen.token_ids), gen.text, gen.finish_reason, verdict,
                                           gen.logprobs)
                trajectories.append(traj)
                branches.append({"task_id": traj.task_id, "sample": traj.sample, "branch": k,
                                 "turn": point.turn, "after_ok": point.after_ok, "ok": bool(verdict.ok),
                                 "stage": verdict.stage, "error_class": verdict.error_class,
                                 "finish_reason": gen.finish_reason, "score": float(verdict.score)})
                finished += 1
            pending.clear()
            if on_batch:
                on_batch(finished, total)

        for call, lo in enumerate(range(0, total, batch_size)):
            batch = work[lo : lo + batch_size]
            requests = [GenerationRequest(messages=[], prompt_ids=p.prompt_ids(), task_id=p.trajectory.task_id,
                                          turn=p.turn, sample=p.trajectory.sample, kind="turn")
                        for p, _ in batch]
            # a seeded run draws each call from its own seed, as the agent does (`AgentConfig.sampling`)
            seeded = params if params.seed is None else dataclasses.replace(params, seed=params.seed + call)
            generations = policy.generate(requests, seeded)
            flush()  # the previous batch's verdicts, judged while this batch was generated
            for (point, k), gen in zip(batch, generations, strict=True):
                pending.append((point, k, gen, judge(tasks[point.trajectory.task_id], gen.text)))
        flush()
    return summarize(read_journal(out / BRANCHES_FILE))


def load_points(run: str | Path, turn: int) -> list[BranchPoint]:
    """The branch points of a recorded run (`atrl eval` or `atrl train` directory, or a
    trajectory file)."""
    from atrl.rl.sft_data import trajectory_files

    trajectories: Iterator[Trajectory] = (t for f in trajectory_files([run]) for t in read_trajectories(f))
    points = branch_points(trajectories, turn)
    if not points:
        raise UsageError(f"no episode of {run} reached turn {turn}", "branch a run made with --max-turns above it")
    return points
