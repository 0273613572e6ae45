"""The report's figures: titled, labelled, and with integer ticks only where they count things
(turns, compactions, episodes, candidates); counts start at 0 and never go negative."""

from __future__ import annotations

import pytest

from atrl.eval.availability import RunTiming
from atrl.eval.breakdown import verdict_cascade
from atrl.eval.episodes import EpisodeSummary, TurnOutcome, to_attempts
from atrl.eval.plots import (
    cascade_figure,
    compactions_figure,
    fast_p_figure,
    speedups_figure,
    success_by_turn_figure,
)

UNTIMED = RunTiming(timed=False, backends=("interpreter",), untimed=("interpreter",))


def _episode(task: str, sample: int, stages: list[str], compactions: int = 0, speedup: float | None = None):
    turns = [TurnOutcome(i, 1.0 if s == "done" else 0.0, s in ("correctness", "profile", "done"), s == "done", s,
                         speedup=speedup if s == "done" else None) for i, s in enumerate(stages)]
    return EpisodeSummary(task, 1, sample, turns, segments=compactions + 1, compactions=compactions)


def _visible_ticks(ax, which: str) -> list[float]:
    low, high = sorted(ax.get_xlim() if which == "x" else ax.get_ylim())
    ticks = ax.get_xticks() if which == "x" else ax.get_yticks()
    return [t for t in ticks if low - 1e-9 <= t <= high + 1e-9]


def _assert_integer_ticks(ax, which: str, minimum: int) -> None:
    ticks = _visible_ticks(ax, which)
    assert ticks, f"no {which} ticks"
    assert all(float(t).is_integer() for t in ticks), ticks
    assert min(ticks) >= minimum, ticks


def _labelled(fig) -> object:
    (ax,) = fig.axes
    assert ax.get_title() and ax.get_xlabel()
    return ax


@pytest.mark.parametrize("turns", [1, 3, 25])
def test_success_by_turn_has_a_title_labels_and_integer_turns_from_one(turns):
    episodes = [_episode("a", 0, ["static"] * (turns - 1) + ["done"]), _episode("b", 0, ["format"] * turns)]
    ax = _labelled(success_by_turn_figure(episodes))
    assert ax.get_ylabel()
    _assert_integer_ticks(ax, "x", minimum=1)
    assert ax.get_xlim()[0] > 0 and ax.get_xlim()[1] < turns + 1


@pytest.mark.parametrize("most", [0, 2, 30])
def test_compactions_axis_is_integer_and_never_negative(most):
    episodes = [_episode("a", s, ["static"], compactions=c) for s, c in enumerate(sorted({0, most // 2, most}))]
    ax = _labelled(compactions_figure(episodes))
    assert ax.get_ylabel() == "episodes"
    _assert_integer_ticks(ax, "x", minimum=0)
    _assert_integer_ticks(ax, "y", minimum=0)
    assert ax.get_xlim()[0] > -1


def test_cascade_picture_lists_every_stage_with_integer_candidate_counts():
    episodes = [_episode("a", 0, ["format", "static", "compile", "correctness", "done"])]
    steps = verdict_cascade(episodes, timed=False)
    ax = _labelled(cascade_figure(steps, UNTIMED))
    assert [t.get_text() for t in ax.get_yticklabels()] == [s.label for s in steps]
    assert "not timed on interpreter" in ax.get_title()
    _assert_integer_ticks(ax, "x", minimum=0)
    assert [round(bar.get_width()) for bar in ax.patches] == [5, 4, 3, 2, 1]


def test_timed_figures_have_titles_labels_and_integer_counts():
    episodes = [_episode("a", s, ["compile", "done"], speedup=0.5 + s) for s in range(4)]
    attempts = to_attempts(episodes, "best")
    _labelled(fast_p_figure(attempts))
    ax = _labelled(speedups_figure(attempts))
    _assert_integer_ticks(ax, "y", minimum=0)
