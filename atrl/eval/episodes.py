"""Episode summaries: the per-episode record an eval run journals, and its reduction to attempts.

`episodes.jsonl` in a run directory holds one `EpisodeSummary` per finished episode. It keeps
what the metrics need (every turn's outcome), so reports can be rebuilt without re-running
anything; the full token-level trajectories are journaled beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from atrl.eval.metrics import Attempt
from atrl.harness.verdict import STAGES


@dataclass
class TurnOutcome:
    turn: int
    score: float
    compiled: bool
    correct: bool
    stage: str
    error_class: str | None = None
    speedup: float | None = None


@dataclass
class EpisodeSummary:
    task_id: str
    level: int
    sample: int
    turns: list[TurnOutcome] = field(default_factory=list)
    segments: int = 1
    compactions: int = 0
    stop_reason: str = ""
    backend: str = ""  # the backend that judged the episode ("" in records written before it was kept)
    timed: bool | None = None  # whether that backend times candidates (None: not recorded)

    @classmethod
    def from_dict(cls, data: dict) -> EpisodeSummary:
        data = dict(data)
        data["turns"] = [TurnOutcome(**t) for t in data.get("turns", [])]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.sample)

    def best_turn(self) -> TurnOutcome | None:
        """The highest-scoring turn; on equal scores the one that got furthest through the cascade
        (a compiled wrong kernel over one that did not compile), then the earliest."""
        def rank(t: TurnOutcome) -> tuple[float, int, int]:
            return (t.score, STAGES.index(t.stage) if t.stage in STAGES else 0, -t.turn)

        return max(self.turns, key=rank) if self.turns else None

    def last_turn(self) -> TurnOutcome | None:
        return self.turns[-1] if self.turns else None


def summarize_trajectory(trajectory, level: int, backend: str = "", timed: bool | None = None) -> EpisodeSummary:
    """Reduce an agent `Trajectory` to its `EpisodeSummary`; `backend` judged it, and `timed` says
    whether that backend times candidates."""
    turns = []
    for t in trajectory.turns:
        v = t.verdict or {}
        timing = v.get("timing") or {}
        turns.append(
            TurnOutcome(
                turn=t.index,
                score=float(t.score),
                compiled=v.get("stage") in ("correctness", "profile", "done"),
                correct=bool(v.get("ok")),
                stage=str(v.get("stage", "format")),
                error_class=v.get("error_class"),
                speedup=timing.get("speedup") if v.get("ok") else None,
            )
        )
    return EpisodeSummary(
        task_id=trajectory.task_id,
        level=level,
        sample=trajectory.sample,
        turns=turns,
        segments=len(trajectory.segments),
        compactions=trajectory.compactions,
        stop_reason=trajectory.stop_reason,
        backend=backend,
        timed=timed,
    )


def to_attempts(episodes: list[EpisodeSummary], which: str = "best") -> list[Attempt]:
    """One `Attempt` per episode from its best turn (`which="best"`) or its last turn (`"last"`)."""
    if which not in ("best", "last"):
        raise ValueError(f"which must be 'best' or 'last', got {which!r}")
    attempts = []
    for ep in episodes:
        turn = ep.best_turn() if which == "best" else ep.last_turn()
        if turn is None:
            attempts.append(Attempt(ep.task_id, ep.level, ep.sample, False, False, None))
        else:
            attempts.append(Attempt(ep.task_id, ep.level, ep.sample, turn.compiled, turn.correct, turn.speedup))
    return attempts


def success_by_turn(episodes: list[EpisodeSummary]) -> list[float]:
    """Share of episodes with a correct kernel at or before turn t, for t = 0 .. max turns − 1."""
    if not episodes:
        return []
    horizon = max((len(ep.turns) for ep in episodes), default=0)
    shares = []
    for t in range(horizon):
        solved = sum(any(turn.correct for turn in ep.turns[: t + 1]) for ep in episodes)
        shares.append(solved / len(episodes))
    return shares
