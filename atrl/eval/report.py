"""`atrl report DIR`: tables and plots for a finished (or partial) eval run.

Reads `DIR/episodes.jsonl` (and `DIR/config.yaml` when present) and writes `DIR/report.md`,
`DIR/metrics.json` and PNG plots: the fast_p curve, the speedup distribution, success by turn,
and compactions per episode. Timing metrics read "unavailable" for untimed (interpreter) runs.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import yaml

from atrl.errors import UsageError
from atrl.eval.episodes import EpisodeSummary, success_by_turn, to_attempts
from atrl.eval.metrics import FAST_P_THRESHOLDS, Attempt, by_level, fast_p, summarize, timed
from atrl.jsonio import read_journal

EPISODES_FILE = "episodes.jsonl"


def load_episodes(run_dir: Path) -> list[EpisodeSummary]:
    """Every complete episode record of a run; the last record wins if one was written twice."""
    path = run_dir / EPISODES_FILE
    if not path.exists():
        raise UsageError(f"{path} does not exist", "point atrl report at the --out directory of an atrl eval run")
    latest: dict[tuple[str, int], EpisodeSummary] = {}
    for record in read_journal(path):
        ep = EpisodeSummary.from_dict(record)
        latest[ep.key] = ep
    return list(latest.values())


def _fmt(value: float | None, pct: bool = False) -> str:
    if value is None:
        return "unavailable"
    return f"{100 * value:.1f}%" if pct else f"{value:.3f}"


_ROWS = [
    ("compile rate", "compile_rate", True),
    ("correctness", "correctness", True),
    *[(f"fast_{p:g}", f"fast_{p:g}", True) for p in FAST_P_THRESHOLDS],
    ("geomean speedup (correct)", "speedup_geomean", False),
    ("mean speedup (correct)", "speedup_mean", False),
    ("median speedup (correct)", "speedup_median", False),
    ("geomean speedup, failures as 1×", "speedup_geomean_failures_as_1x", False),
    ("pass@1", "pass@1", True),
    ("NPUKernelBench acceptance ≥0.6×", "npu_accept_0.6", True),
    ("NPUKernelBench acceptance ≥0.8×", "npu_accept_0.8", True),
]


def metrics_table(best: dict, last: dict) -> str:
    lines = ["| metric | best of turns | last turn |", "|---|---|---|"]
    for label, key, pct in _ROWS:
        lines.append(f"| {label} | {_fmt(best.get(key), pct)} | {_fmt(last.get(key), pct)} |")
    return "\n".join(lines)


def level_table(attempts: list[Attempt]) -> str:
    lines = ["| level | tasks | attempts | compile | correct | fast_1 | geomean speedup |", "|---|---|---|---|---|---|---|"]
    for level, m in by_level(attempts).items():
        lines.append(
            f"| {level} | {int(m['tasks'] or 0)} | {int(m['attempts'] or 0)} | {_fmt(m['compile_rate'], True)} | "
            f"{_fmt(m['correctness'], True)} | {_fmt(m['fast_1'], True)} | {_fmt(m['speedup_geomean'])} |"
        )
    return "\n".join(lines)


def _plots(run_dir: Path, episodes: list[EpisodeSummary], attempts: list[Attempt]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    if timed(attempts):
        ps = [p / 20 for p in range(0, 61)]
        fig, ax = plt.subplots(figsize=(5, 3.2))
        ax.plot(ps, [fast_p(attempts, p) for p in ps])
        ax.set_xlabel("p (speedup threshold)")
        ax.set_ylabel("fast_p")
        ax.set_title("fast_p over all attempts (best of turns)")
        fig.tight_layout()
        fig.savefig(run_dir / "fast_p.png", dpi=120)
        plt.close(fig)
        made.append("fast_p.png")
        speedups = [a.speedup for a in attempts if a.correct and a.speedup]
        fig, ax = plt.subplots(figsize=(5, 3.2))
        ax.hist(speedups, bins=20)
        ax.set_xlabel("speedup over eager PyTorch")
        ax.set_ylabel("correct attempts")
        fig.tight_layout()
        fig.savefig(run_dir / "speedups.png", dpi=120)
        plt.close(fig)
        made.append("speedups.png")
    shares = success_by_turn(episodes)
    if shares:
        fig, ax = plt.subplots(figsize=(5, 3.2))
        ax.plot(range(1, len(shares) + 1), shares, marker="o")
        ax.set_xlabel("turn")
        ax.set_ylabel("share solved by this turn")
        ax.set_ylim(0, 1.02)
        fig.tight_layout()
        fig.savefig(run_dir / "success_by_turn.png", dpi=120)
        plt.close(fig)
        made.append("success_by_turn.png")
    counts = Counter(ep.compactions for ep in episodes)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    xs = sorted(counts)
    ax.bar(xs, [counts[x] for x in xs])
    ax.set_xlabel("compactions per episode")
    ax.set_ylabel("episodes")
    fig.tight_layout()
    fig.savefig(run_dir / "compactions.png", dpi=120)
    plt.close(fig)
    made.append("compactions.png")
    return made


def run_metrics(episodes: list[EpisodeSummary]) -> dict:
    """What `metrics.json` holds: best-of-turns and last-turn summaries, and best-of-turns by level."""
    best_attempts, last_attempts = to_attempts(episodes, "best"), to_attempts(episodes, "last")
    ks = tuple(k for k in (1, 5, 10) if k <= max(ep.sample for ep in episodes) + 1)
    return {"best_of_turns": summarize(best_attempts, ks), "last_turn": summarize(last_attempts, ks),
            "by_level": by_level(best_attempts, ks)}


def write_report(run_dir: str | Path) -> Path:
    """Write report.md, metrics.json and plots for the run in `run_dir`; return report.md's path."""
    run_dir = Path(run_dir)
    episodes = load_episodes(run_dir)
    if not episodes:
        raise UsageError(f"{run_dir / EPISODES_FILE} holds no finished episode", "run atrl eval first")
    config = {}
    if (run_dir / "config.yaml").exists():
        config = yaml.safe_load((run_dir / "config.yaml").read_text()) or {}
    metrics = run_metrics(episodes)
    best, last = metrics["best_of_turns"], metrics["last_turn"]
    best_attempts = to_attempts(episodes, "best")
    (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2))
    plots = _plots(run_dir, episodes, best_attempts)
    errors = Counter(t.error_class for ep in episodes for t in ep.turns if t.error_class)
    lines = [
        f"# ATRL evaluation report: {run_dir.name}",
        "",
        f"- suite: {config.get('suite', '?')}, policy: {config.get('policy', '?')}, backend: {config.get('backend', '?')}",
        f"- episodes: {len(episodes)} over {len({e.task_id for e in episodes})} tasks; "
        f"compactions per episode: {sum(e.compactions for e in episodes) / len(episodes):.2f}",
    ]
    if not timed(best_attempts):
        lines.append("- timing: unavailable on this backend (correctness only; speedups are never invented)")
    lines += ["", "## Metrics", "", metrics_table(best, last), "", "## By level (best of turns)", "", level_table(best_attempts)]
    if errors:
        lines += ["", "## Failure classes (all turns)", "", "| class | turns |", "|---|---|"]
        lines += [f"| {cls} | {n} |" for cls, n in errors.most_common()]
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p}]({p})" for p in plots]
    report = run_dir / "report.md"
    report.write_text("\n".join(lines) + "\n")
    return report
