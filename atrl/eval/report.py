"""`atrl report DIR`: tables and plots for a finished (or partial) eval run.

Reads `DIR/episodes.jsonl` (and `DIR/config.yaml` when present) and writes `DIR/report.md`
(metrics, by level, by task, the verdict cascade, failure classes), `DIR/metrics.json` (the same
numbers) and PNG plots (`atrl.eval.plots`). A metric without a value reads "n/a (<why>)" in both
files, by the rule of `atrl.eval.availability`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import yaml

from atrl.errors import UsageError
from atrl.eval.availability import RunTiming, explained, format_metric, run_timing
from atrl.eval.breakdown import TaskOutcome, later_turns, per_task, verdict_cascade
from atrl.eval.episodes import EpisodeSummary, to_attempts
from atrl.eval.metrics import FAST_P_THRESHOLDS, by_level, summarize
from atrl.harness.feedback.failures import JUDGE_SIDE_CLASSES
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
        lines.append(f"| {label} | {format_metric(best.get(key), pct)} | {format_metric(last.get(key), pct)} |")
    return "\n".join(lines)


def level_table(levels: dict) -> str:
    """Best-of-turns metrics per level (`run_metrics(...)["by_level"]`)."""
    lines = ["| level | tasks | attempts | compile | correct | fast_1 | geomean speedup |", "|---|---|---|---|---|---|---|"]
    for level, m in levels.items():
        lines.append(
            f"| {level} | {int(m['tasks'])} | {int(m['attempts'])} | {format_metric(m['compile_rate'], True)} | "
            f"{format_metric(m['correctness'], True)} | {format_metric(m['fast_1'], True)} | "
            f"{format_metric(m['speedup_geomean'], False)} |"
        )
    return "\n".join(lines)


def task_table(rows: list[dict]) -> str:
    """One line per task (`run_metrics(...)["by_task"]`)."""
    lines = ["| task | level | episodes | turns | compiled | correct | first correct turn | best speedup "
             "| furthest stage | compactions |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        first = "—" if r["first_correct_turn"] is None else str(r["first_correct_turn"])
        lines.append(
            f"| {r['task_id']} | {r['level']} | {r['episodes']} | {r['turns']} | {r['compiled']}/{r['episodes']} | "
            f"{r['correct']}/{r['episodes']} | {first} | {format_metric(r['best_speedup'], False)} | "
            f"{r['furthest_stage']} | {r['compactions']} |"
        )
    return "\n".join(lines)


def cascade_table(steps: list[dict]) -> str:
    """The verdict cascade (`run_metrics(...)["cascade"]`) as counts and shares of all candidates."""
    total = steps[0]["count"] if steps else 0
    lines = ["| stage | candidates | share |", "|---|---|---|"]
    for step in steps:
        share = f"{100 * step['count'] / total:.1f}%" if total else "n/a (no candidates)"
        lines.append(f"| {step['label']} | {step['count']} | {share} |")
    return "\n".join(lines)


# What each mode of a backend with modes did to the verdicts it judged.
BACKEND_MODES = {
    "ascend:lowering": "judged without an NPU: every kernel lowered by triton-ascend's compiler to linalg for "
                       "Ascend910B3 (lowering errors are compile failures), then run by triton-ascend's "
                       "interpreter for correctness; no NPU binary (CANN absent), not timed",
    "ascend:npu": "judged on an Ascend NPU: compiled by triton-ascend with CANN, correctness and timing "
                  "(device events around the whole forward) on the device",
}


def _task_record(outcome: TaskOutcome, timing: RunTiming) -> dict:
    record = asdict(outcome)
    if outcome.best_speedup is None:
        record["best_speedup"] = timing.not_timed if not timing.timed else "n/a (no correct attempt)"
    return record


def run_metrics(episodes: list[EpisodeSummary], configured_backend: str | None = None) -> dict:
    """What `metrics.json` holds: the backends and whether they time; best-of-turns and last-turn
    summaries; best-of-turns by level; one record per task; the verdict cascade. A metric
    without a value holds its n/a text (`atrl.eval.availability`)."""
    timing = run_timing(episodes, configured_backend)
    best_attempts, last_attempts = to_attempts(episodes, "best"), to_attempts(episodes, "last")
    ks = tuple(k for k in (1, 5, 10) if k <= max(ep.sample for ep in episodes) + 1)
    return {
        "backends": list(timing.backends),
        "timed": timing.timed,
        "best_of_turns": explained(summarize(best_attempts, ks, timing.timed), timing),
        "last_turn": explained(summarize(last_attempts, ks, timing.timed), timing),
        "by_level": {level: explained(m, timing) for level, m in by_level(best_attempts, ks, timing.timed).items()},
        "by_task": [_task_record(outcome, timing) for outcome in per_task(episodes)],
        "cascade": [asdict(step) for step in verdict_cascade(episodes, timing.timed)],
        "later_turns": asdict(later_turns(episodes)),
    }


def _share(count: int, total: int) -> str:
    return f"{count}/{total} ({count / total:.0%})" if total else "n/a (no such episode)"


def write_report(run_dir: str | Path) -> Path:
    """Write report.md, metrics.json and plots for the run in `run_dir`; return report.md's path."""
    from atrl.eval.plots import write_plots

    run_dir = Path(run_dir)
    episodes = load_episodes(run_dir)
    if not episodes:
        raise UsageError(f"{run_dir / EPISODES_FILE} holds no finished episode", "run atrl eval first")
    config = {}
    if (run_dir / "config.yaml").exists():
        config = yaml.safe_load((run_dir / "config.yaml").read_text()) or {}
    timing = run_timing(episodes, config.get("backend"))
    metrics = run_metrics(episodes, config.get("backend"))
    (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2, ensure_ascii=False))
    best_attempts = to_attempts(episodes, "best")
    plots = write_plots(run_dir, episodes, best_attempts, verdict_cascade(episodes, timing.timed), timing)
    errors = Counter(t.error_class for ep in episodes for t in ep.turns if t.error_class)
    backend = ", ".join(timing.backends)
    if config.get("backend") == "auto":
        backend += " (auto)"
    lines = [
        f"# ATRL evaluation report: {run_dir.name}",
        "",
        f"- suite: {config.get('suite', '?')}, policy: {config.get('policy', '?')}, backend: {backend}",
        f"- episodes: {len(episodes)} over {len({e.task_id for e in episodes})} tasks, "
        f"{sum(len(e.turns) for e in episodes)} judged turns; "
        f"compactions per episode: {sum(e.compactions for e in episodes) / len(episodes):.2f}",
    ]
    lines += [f"- {label}: {BACKEND_MODES[label]}" for label in timing.backends if label in BACKEND_MODES]
    if not timing.timed:
        lines.append(f"- timing: speed metrics are {timing.not_timed}: correctness only, speedups are never invented")
    unjudged = Counter({cls: n for cls, n in errors.items() if cls in JUDGE_SIDE_CLASSES})
    if unjudged:
        tasks = sorted({e.task_id for e in episodes for t in e.turns if t.error_class in JUDGE_SIDE_CLASSES})
        turns, n_tasks = sum(unjudged.values()), len(tasks)
        lines.append(f"- not judged: {turns} turn{'s' * (turns != 1)} of {n_tasks} task{'s' * (n_tasks != 1)} ("
                     + ", ".join(f"{cls} ×{n}" for cls, n in unjudged.most_common())
                     + "): the judge's side, not the policy's (a task reference that failed at this size, a busy "
                     "GPU); they count as failed in the tables below — " + ", ".join(tasks[:5])
                     + (", ..." if len(tasks) > 5 else ""))
    lines += ["", "## Metrics", "", metrics_table(metrics["best_of_turns"], metrics["last_turn"]),
              "", "## By level (best of turns)", "", level_table(metrics["by_level"]),
              "", "## By task", "", task_table(metrics["by_task"]),
              "", "## Verdict cascade (every judged turn)", "", cascade_table(metrics["cascade"])]
    later = later_turns(episodes)
    if later.wrong_first or later.right_first:
        lines += ["", "## Turns after the first", "",
                  f"- first turn wrong, a later turn correct (repaired): {_share(later.repaired, later.wrong_first)}",
                  f"- first turn correct, second turn correct too (kept): {_share(later.kept, later.right_first)}"]
    if errors:
        lines += ["", "## Failure classes (all turns)", "", "| class | turns |", "|---|---|"]
        lines += [f"| {cls} | {n} |" for cls, n in errors.most_common()]
    lines += ["", "## Plots", ""] + [f"![{p}]({p})" for p in plots]
    report = run_dir / "report.md"
    report.write_text("\n".join(lines) + "\n")
    return report
