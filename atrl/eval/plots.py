"""The report's plots, one function per figure; each returns a matplotlib `Figure` (no pyplot
state), and `write_plots` saves them as PNGs.

Every figure has a title and labelled axes; axes that count things (turns, compactions,
episodes, candidates) have integer ticks only, and counts start at 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from atrl.eval.availability import RunTiming
from atrl.eval.breakdown import CascadeStep
from atrl.eval.episodes import EpisodeSummary, success_by_turn
from atrl.eval.metrics import Attempt, fast_p

SIZE = (6.0, 3.6)  # inches
DPI = 120
MAX_LISTED_TICKS = 15  # up to this many integer values, every one gets a tick
MAX_ANNOTATED_POINTS = 10  # beyond this many points, value labels would overlap


def _count_locator() -> MaxNLocator:
    """Integer ticks at round steps (1, 2, 5, 10, ...) for an axis of counts."""
    return MaxNLocator(integer=True, steps=[1, 2, 5, 10])


def _integer_axis(axis, low: int, high: int) -> None:
    """Integer ticks only on `axis` (ax.xaxis / ax.yaxis) spanning low..high."""
    if high - low + 1 <= MAX_LISTED_TICKS:
        axis.set_ticks(range(low, high + 1))
    else:
        axis.set_major_locator(_count_locator())


def _label_bars(ax: Axes, bars, texts: Sequence[str], horizontal: bool = False) -> None:
    for bar, text in zip(bars, texts, strict=True):
        if horizontal:
            ax.annotate(text, (bar.get_width(), bar.get_y() + bar.get_height() / 2), xytext=(3, 0),
                        textcoords="offset points", va="center", fontsize=8)
        else:
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=8)


def success_by_turn_figure(episodes: Sequence[EpisodeSummary]) -> Figure:
    """Share of episodes with a correct kernel at or before turn t (1-based)."""
    shares = success_by_turn(episodes)
    fig = Figure(figsize=SIZE)
    ax = fig.subplots()
    turns = list(range(1, len(shares) + 1))
    ax.plot(turns, shares, marker="o")
    for turn, share in zip(turns, shares, strict=True) if len(shares) <= MAX_ANNOTATED_POINTS else ():
        ax.annotate(f"{100 * share:.0f}%", (turn, share), xytext=(0, 5), textcoords="offset points",
                    ha="center", fontsize=8)
    ax.set_title(f"Episodes solved by turn t ({len(episodes)} episodes)")
    ax.set_xlabel("turn t (1 = first attempt)")
    ax.set_ylabel("correct at or before turn t")
    ax.set_xlim(0.5, len(shares) + 0.5)
    _integer_axis(ax.xaxis, 1, len(shares))
    ax.set_ylim(0, 1.1)
    ax.yaxis.set_major_formatter(PercentFormatter(xmax=1))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def compactions_figure(episodes: Sequence[EpisodeSummary]) -> Figure:
    """How many episodes compacted their context 0, 1, 2, ... times."""
    counts = Counter(ep.compactions for ep in episodes)
    most = max(counts)
    values = list(range(most + 1))
    fig = Figure(figsize=SIZE)
    ax = fig.subplots()
    bars = ax.bar(values, [counts[v] for v in values], width=0.6)
    _label_bars(ax, bars, [str(counts[v]) for v in values])
    ax.set_title(f"Context compactions per episode ({len(episodes)} episodes)")
    ax.set_xlabel("compactions in the episode")
    ax.set_ylabel("episodes")
    ax.set_xlim(-0.5, most + 0.5)
    _integer_axis(ax.xaxis, 0, most)
    ax.set_ylim(0, max(counts.values()) * 1.15)
    ax.yaxis.set_major_locator(_count_locator())
    fig.tight_layout()
    return fig


def cascade_figure(steps: Sequence[CascadeStep], timing: RunTiming) -> Figure:
    """How many candidates reached each harness stage, top (judged) to bottom (done)."""
    total = steps[0].count
    fig = Figure(figsize=(7.0, 0.45 * len(steps) + 1.4))
    ax = fig.subplots()
    positions = list(range(len(steps)))
    colors = ["C2" if s.stage == "done" else "C0" for s in steps]
    bars = ax.barh(positions, [s.count for s in steps], color=colors)
    _label_bars(ax, bars, [f"{s.count} ({100 * s.count / total:.0f}%)" if total else "0" for s in steps],
                horizontal=True)
    ax.set_yticks(positions, [s.label for s in steps])
    ax.invert_yaxis()
    ax.set_xlim(0, max(total, 1) * 1.25)  # room for the labels
    ax.xaxis.set_major_locator(_count_locator())
    untimed = "" if timing.timed else f"\nno profile stage: timing is {timing.not_timed}"
    ax.set_title(f"Verdict cascade: how far the {total} judged candidates got{untimed}", fontsize=10)
    ax.set_xlabel("candidates (every judged turn)")
    fig.tight_layout()
    return fig


def fast_p_figure(attempts: Sequence[Attempt]) -> Figure:
    """fast_p against the threshold p (timed runs only)."""
    ps = [p / 20 for p in range(0, 61)]
    fig = Figure(figsize=SIZE)
    ax = fig.subplots()
    ax.plot(ps, [fast_p(attempts, p) for p in ps])
    ax.set_title(f"fast_p: correct and faster than p× eager PyTorch ({len(attempts)} attempts, best of turns)",
                 fontsize=9)
    ax.set_xlabel("p (speedup threshold, ×)")
    ax.set_ylabel("share of all attempts")
    ax.set_ylim(0, 1.05)
    ax.yaxis.set_major_formatter(PercentFormatter(xmax=1))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def speedups_figure(attempts: Sequence[Attempt]) -> Figure:
    """Histogram of the speedups of correct attempts (timed runs with a correct attempt only)."""
    speedups = [a.speedup for a in attempts if a.correct and a.speedup is not None]
    fig = Figure(figsize=SIZE)
    ax = fig.subplots()
    ax.hist(speedups, bins=min(20, max(len(speedups), 1)))
    ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.set_title(f"Speedup of the {len(speedups)} correct attempts (best of turns)")
    ax.set_xlabel("speedup over eager PyTorch (×; dashed: 1×)")
    ax.set_ylabel("correct attempts")
    ax.yaxis.set_major_locator(_count_locator())
    fig.tight_layout()
    return fig


def write_plots(run_dir: Path, episodes: Sequence[EpisodeSummary], attempts: Sequence[Attempt],
                cascade: Sequence[CascadeStep], timing: RunTiming) -> list[str]:
    """Save the run's figures as PNGs in `run_dir`; returns their file names, in report order."""
    figures = {"cascade.png": cascade_figure(cascade, timing)}
    if timing.timed:
        figures["fast_p.png"] = fast_p_figure(attempts)
        if any(a.correct and a.speedup is not None for a in attempts):
            figures["speedups.png"] = speedups_figure(attempts)
    if any(ep.turns for ep in episodes):
        figures["success_by_turn.png"] = success_by_turn_figure(episodes)
    figures["compactions.png"] = compactions_figure(episodes)
    for name, fig in figures.items():
        fig.savefig(run_dir / name, dpi=DPI)
    return list(figures)
