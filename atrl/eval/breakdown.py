"""A run broken down for the report: per task, and by how far its candidates got through the
harness's cascade (format → static → compile → correctness → profile → done).

A verdict's `stage` is the stage that failed, or "done" when every stage the backend runs passed,
so a candidate *reached* every stage up to and including its own. Turn numbers shown to people
are 1-based (turn 1 is the first attempt).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from atrl.eval.episodes import EpisodeSummary
from atrl.harness.verdict import STAGES


def stage_rank(stage: str) -> int:
    """Position of `stage` in the cascade (an unknown stage counts as the first, `format`)."""
    return STAGES.index(stage) if stage in STAGES else 0


@dataclass(frozen=True)
class TaskOutcome:
    """One task over its episodes. Counts are episodes unless named otherwise."""

    task_id: str
    level: int
    episodes: int
    turns: int  # judged turns over all its episodes
    compiled: int  # episodes with a turn that compiled
    correct: int  # episodes with a correct turn
    first_correct_turn: int | None  # 1-based; the earliest turn at which any episode was correct
    best_speedup: float | None  # over correct turns; None without any (or without timing)
    furthest_stage: str  # the furthest cascade stage any of its turns reached
    compactions: int  # over all its episodes


def per_task(episodes: Sequence[EpisodeSummary]) -> list[TaskOutcome]:
    """One `TaskOutcome` per task, sorted by task id."""
    by_task: dict[str, list[EpisodeSummary]] = {}
    for ep in episodes:
        by_task.setdefault(ep.task_id, []).append(ep)
    rows = []
    for task_id in sorted(by_task):
        eps = by_task[task_id]
        turns = [t for ep in eps for t in ep.turns]
        correct_turns = [t.turn + 1 for t in turns if t.correct]
        speedups = [t.speedup for t in turns if t.correct and t.speedup is not None]
        rows.append(TaskOutcome(
            task_id=task_id,
            level=eps[0].level,
            episodes=len(eps),
            turns=len(turns),
            compiled=sum(any(t.compiled for t in ep.turns) for ep in eps),
            correct=sum(any(t.correct for t in ep.turns) for ep in eps),
            first_correct_turn=min(correct_turns) if correct_turns else None,
            best_speedup=max(speedups) if speedups else None,
            furthest_stage=max((t.stage for t in turns), key=stage_rank, default="format"),
            compactions=sum(ep.compactions for ep in eps),
        ))
    return rows


@dataclass(frozen=True)
class CascadeStep:
    """`count` of all judged candidates reached `stage`; `label` says so in words."""

    stage: str
    label: str
    count: int


_LABELS = {
    "format": "judged",
    "static": "reached static checks (code found)",
    "compile": "reached compile (passed static)",
    "correctness": "reached correctness (compiled)",
    "profile": "reached profile (correct)",
}


def verdict_cascade(episodes: Sequence[EpisodeSummary], timed: bool) -> list[CascadeStep]:
    """How many of all judged candidates (every turn of every episode) reached each stage. An
    untimed backend has no profile stage: its last step, `done`, is "correct"."""
    ranks = [stage_rank(t.stage) for ep in episodes for t in ep.turns]
    stages = [s for s in STAGES if timed or s != "profile"]
    steps = []
    for stage in stages:
        label = _LABELS.get(stage) or ("done (correct and timed)" if timed else "done (correct)")
        steps.append(CascadeStep(stage, label, sum(r >= STAGES.index(stage) for r in ranks)))
    return steps


@dataclass
class LaterTurns:
    """What turns after the first did, over episodes that have one (turn 1 is the first attempt):
    `repaired` of `wrong_first` episodes whose first turn was wrong reached a correct turn later;
    `kept` of `right_first` episodes whose first turn was correct had a correct second turn too
    (a later turn that breaks a right kernel costs nothing under best-of-turns, so it is counted
    apart)."""

    wrong_first: int
    repaired: int
    right_first: int
    kept: int


def later_turns(episodes: Sequence[EpisodeSummary]) -> LaterTurns:
    return count_later_turns([[t.correct for t in ep.turns] for ep in episodes])


def count_later_turns(correct_by_turn: Sequence[Sequence[bool]]) -> LaterTurns:
    """`LaterTurns` from each episode's turns, as correct or not, in order."""
    multi = [turns for turns in correct_by_turn if len(turns) >= 2]
    wrong = [turns for turns in multi if not turns[0]]
    right = [turns for turns in multi if turns[0]]
    return LaterTurns(wrong_first=len(wrong), repaired=sum(any(turns[1:]) for turns in wrong),
                      right_first=len(right), kept=sum(bool(turns[1]) for turns in right))
