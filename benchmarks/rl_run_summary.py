"""Does a training run's reward rise? Per-step metrics of an `atrl train` run, least-squares slopes
with 95% confidence intervals (Student t), and, given the start policy's screen, the drift of
the solve rate against what the start policy would have scored on each step's tasks.

The trainer draws `tasks_per_step` tasks per step from a seeded generator (`seed:step`), so the
draw is reproduced here; each drawn task's solve rate in the screen (the start policy, same agent
settings) gives the step's expected solve rate with no learning at all. Observed minus expected
takes the task draw out of the comparison: a slope of that difference away from 0 is the effect
of the updates, not of which tasks came up.

With `--against OTHER/metrics.jsonl` (an arm run with the same seed, so each step drew the same
tasks): the paired per-step differences of the solve rate (this run minus the other) over steps
2..N, their mean with a t interval, and a two-sided sign-flip test (exact up to 20 pairs, then sampled).

    python benchmarks/rl_run_summary.py --metrics RUN/metrics.jsonl [--config RUN/config.yaml \
        --screen SCREEN/episodes.jsonl] [--against OTHER/metrics.jsonl] [--markdown OUT.md]
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import yaml

COLUMNS = (("step", "step", "{:.0f}"), ("reward_mean", "reward", "{:.3f}"),
           ("episode_solved_rate", "solved", "{:.1%}"), ("correct_rate", "correct (turns)", "{:.1%}"),
           ("compile_rate", "compiled (turns)", "{:.1%}"), ("entropy", "entropy", "{:.3f}"),
           ("truncated_responses", "cut at the token limit", "{:.0f}"), ("update_norm", "‖ΔW‖", "{:.3f}"),
           ("mismatch_abs_mean", "|Δ log p| mean", "{:.3f}"), ("segments_per_episode", "segments / episode", "{:.1f}"),
           ("time_generation_s", "generation s", "{:.1f}"), ("time_evaluation_s", "evaluation s", "{:.1f}"),
           ("time_update_s", "update s", "{:.1f}"))
TRENDS = ("reward_mean", "episode_solved_rate", "correct_rate", "compile_rate", "entropy", "truncated_responses")


def _t_cdf(t: float, df: int) -> float:
    """Student t CDF by Simpson's rule on its density (plenty for a 95% quantile)."""
    def density(x: float) -> float:
        return math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi) \
            * (1 + x * x / df) ** (-(df + 1) / 2)
    n, a, b = 2000, 0.0, abs(t)
    h = (b - a) / n
    area = density(a) + density(b) + sum((4 if i % 2 else 2) * density(a + i * h) for i in range(1, n))
    half = area * h / 3
    return 0.5 + half if t >= 0 else 0.5 - half


def t_quantile(p: float, df: int) -> float:
    lo, hi = 0.0, 50.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


def slope_ci(xs: list[float], ys: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """(slope, low, high): ordinary least squares with a Student-t interval on n - 2 degrees of freedom."""
    n = len(xs)
    if n < 3:
        raise ValueError(f"a slope's interval needs at least 3 points, got {n}")
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    intercept = my - slope * mx
    residual = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    stderr = math.sqrt(residual / (n - 2) / sxx)
    half = t_quantile(1 - (1 - level) / 2, n - 2) * stderr
    return slope, slope - half, slope + half


def paired_comparison(rows: list[dict], other: list[dict], key: str = "episode_solved_rate") -> str:
    """Markdown: this run minus `other`, step by step over the steps both reached (from step 2:
    step 1's rollouts are the same in arms that share a seed and a start)."""
    from atrl.rl.experiment_stats import sign_flip_test

    theirs = {int(r["step"]): float(r[key]) for r in other}
    steps = [int(r["step"]) for r in rows if int(r["step"]) >= 2 and int(r["step"]) in theirs]
    if len(steps) < 3:
        raise SystemExit(f"the runs share {len(steps)} steps after step 1; a comparison needs at least 3")
    ours = {int(r["step"]): float(r[key]) for r in rows}
    diffs = [ours[s] - theirs[s] for s in steps]
    n, mean = len(diffs), sum(diffs) / len(diffs)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    half = t_quantile(0.975, n - 1) * sd / math.sqrt(n)
    p = sign_flip_test(diffs)
    return (f"Paired by step ({key}, this run minus the other), steps {steps[0]}-{steps[-1]} ({n} pairs): "
            f"mean {mean:+.4f}, 95% CI [{mean - half:+.4f}, {mean + half:+.4f}] (t, {n - 1} df), "
            f"sign-flip p = {p:.3g}" + ("" if 2 ** n <= 2**20 else " (200,000 random flips)"))


def expected_solve_rates(config_path: Path, screen_path: Path, steps: list[int]) -> list[float]:
    """Per step: the start policy's screened solve rate averaged over the tasks the trainer drew."""
    from atrl.rl.config import TrainConfig
    from atrl.rl.trainer import draw_tasks, load_tasks

    config = TrainConfig(**yaml.safe_load(config_path.read_text()))
    tasks = load_tasks(config)
    solved: dict[str, list[bool]] = defaultdict(list)
    for line in screen_path.read_text().splitlines():
        episode = json.loads(line)
        solved[episode["task_id"]].append(any(turn["correct"] for turn in episode["turns"]))
    missing = sorted({t.id for t in tasks} - set(solved))
    if missing:
        raise SystemExit(f"the screen has no episodes of {', '.join(missing)}: pass the screen of this run's start policy")
    rates = []
    for step in steps:  # the trainer's step counter is 0-based; the metrics' is 1-based
        drawn = draw_tasks(tasks, config.tasks_per_step, config.seed, step - 1)
        rates.append(sum(sum(solved[t.id]) / len(solved[t.id]) for t in drawn) / len(drawn))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=Path, required=True)
    parser.add_argument("--config", type=Path, help="the run's config.yaml (with --screen)")
    parser.add_argument("--screen", type=Path, help="episodes.jsonl of the start policy's screen (with --config)")
    parser.add_argument("--against", type=Path, help="metrics.jsonl of another arm with the same seed")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    if (args.config is None) != (args.screen is None):
        parser.error("--config and --screen go together")
    rows = [json.loads(line) for line in args.metrics.read_text().splitlines() if line.strip()]
    if len(rows) < 3:
        raise SystemExit(f"{args.metrics} has {len(rows)} steps; a slope needs at least 3")
    steps = [int(r["step"]) for r in rows]
    expected = expected_solve_rates(args.config, args.screen, steps) if args.config else None
    header = [label for _, label, _ in COLUMNS] + (["expected solved (start policy)"] if expected else [])
    lines = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    for i, row in enumerate(rows):
        cells = [fmt.format(row[key]) if isinstance(row.get(key), (int, float)) else "" for key, _, fmt in COLUMNS]
        if expected:
            cells.append(f"{expected[i]:.1%}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Least-squares slope per step over {len(rows)} steps, 95% CI (Student t, {len(rows) - 2} df):", "",
              "| metric | first 5 steps | last 5 steps | slope per step | 95% CI |", "|---|---:|---:|---:|---|"]
    series = {key: [float(r[key]) for r in rows] for key in TRENDS if all(key in r for r in rows)}
    if expected:
        series["solved minus expected"] = [r["episode_solved_rate"] - e for r, e in zip(rows, expected, strict=True)]
    for key, ys in series.items():
        slope, low, high = slope_ci([float(s) for s in steps], ys)
        head, tail = sum(ys[:5]) / min(5, len(ys)), sum(ys[-5:]) / min(5, len(ys))
        lines.append(f"| {key} | {head:.4g} | {tail:.4g} | {slope:+.4g} | [{low:+.4g}, {high:+.4g}] |")
    if args.against:
        other = [json.loads(line) for line in args.against.read_text().splitlines() if line.strip()]
        lines += ["", paired_comparison(rows, other)]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
