"""Trajectory records: everything the trainer needs, written as JSON lines.

An episode is a `Trajectory` of `Segment`s, split at compactions. A segment's context only
grows by appending, so its final token sequence (`token_ids`, with a `token_types` entry per
token) contains the prompt of every response in it; `spans` locate each typed piece.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

TokenType = Literal["instruction", "kb", "task", "response", "summary", "feedback", "carried_kernel"]
TOKEN_TYPES: tuple[str, ...] = ("instruction", "kb", "task", "response", "summary", "feedback", "carried_kernel")
TRAINABLE_TYPES: frozenset[str] = frozenset({"response", "summary"})


@dataclass
class Span:
    """Tokens [start, end) of a segment's `token_ids` are of one type; `turn` for responses/feedback."""

    type: str
    start: int
    end: int
    turn: int | None = None


@dataclass
class Turn:
    index: int  # turn number within the episode (0-based)
    segment: int
    response_text: str
    response_start: int  # position of the response's first token in the segment's token_ids
    response_end: int
    finish_reason: str = "stop"
    verdict: dict | None = None  # Verdict as a dict (atrl.harness.verdict.Verdict.from_dict)
    score: float = 0.0
    feedback_text: str = ""
    kb_text: str = ""  # knowledge-base text injected after this turn's verdict, if any


@dataclass
class Segment:
    index: int
    token_ids: list[int] = field(default_factory=list)
    token_types: list[str] = field(default_factory=list)
    logprobs: list[float | None] = field(default_factory=list)  # per token; None for non-sampled tokens
    spans: list[Span] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)  # Turn.index values in this segment
    summary_text: str | None = None  # the compaction summary written at the end of this segment
    summary_fallback: bool = False  # True when the structured fallback replaced the policy's summary
    kb_text: str = ""  # knowledge-base text injected at the start of this segment

    def trainable_mask(self) -> list[bool]:
        """Per token: True where the token was sampled in this segment — its type is trainable
        (`response`/`summary`) *and* it has a log-prob. Template scaffolding around a sampled
        message takes the message's type but has no log-prob, and a summary carried into the next
        segment is typed `summary` there without log-probs: neither is trained."""
        return [t in TRAINABLE_TYPES and lp is not None for t, lp in zip(self.token_types, self.logprobs, strict=True)]


@dataclass
class Trajectory:
    task_id: str
    sample: int
    policy: str
    segments: list[Segment] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    best_score: float = 0.0
    best_turn: int | None = None
    stop_reason: str = ""  # "max_turns" | "max_segments" | "target_score" | "context_budget" | "error"
    config: dict = field(default_factory=dict)

    @property
    def compactions(self) -> int:
        return sum(1 for s in self.segments if s.summary_text is not None)
