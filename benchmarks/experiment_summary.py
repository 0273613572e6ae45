"""Summarise the ATRL-vs-GRPO experiment (docs/experiments/README.md): tables and a reward plot.

    python benchmarks/experiment_summary.py --runs ROOT --out DIR

ROOT holds training runs named `<arm>-s<seed>` (`atrl-s0`, `grpo-s1`, ...; `metrics.jsonl` from
`atrl train`) and evaluation runs named `eval-<name>` (`atrl eval --out`; `metrics.json` from
`atrl.eval.report.write_report`, recomputed in memory from `episodes.jsonl` when it is missing).
An eval run belongs to a training run when `<name>` is the run's name or ends with `-<run name>`
(`eval-atrl-s0`, `eval-heldout-atrl-s0`: eval set "heldout"); others (`eval-sft`) are listed only.

DIR receives `summary.md` (training table, eval table, per-arm mean ± sample std over seeds),
`reward_vs_step.png` and `metrics_all.jsonl` (every training record with `arm` and `seed` added).
Absent values read "n/a". Exit status 2 with one line on stderr when ROOT holds no training run.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atrl.errors import UsageError
from atrl.jsonio import dumps, read_journal

RUN_NAME = re.compile(r"^(?P<arm>.+)-s(?P<seed>\d+)$")
EVAL_PREFIX = "eval-"
LINESTYLES = ("-", "--", ":", "-.")


@dataclass
class Run:
    name: str
    arm: str
    seed: int
    records: list[dict[str, Any]] = field(default_factory=list)

    def series(self, key: str) -> list[float]:
        """The step-ordered values of `key`, left out where absent or not a finite number."""
        return [v for r in self.records if (v := _number(r.get(key))) is not None]

    def final_reward(self) -> float | None:
        """Mean reward_mean over the last 3 steps (fewer when the run is shorter)."""
        rewards = self.series("reward_mean")[-3:]
        return statistics.fmean(rewards) if rewards else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def fmt(value: Any, digits: int = 3) -> str:
    return "n/a" if (value := _number(value)) is None else f"{value:.{digits}f}"


def mean_std(values: list[float]) -> str:
    """`mean ± sample std (n=k)`; std is n/a with one value, everything n/a with none."""
    if not values:
        return "n/a"
    std = fmt(statistics.stdev(values)) if len(values) > 1 else "n/a"
    return f"{statistics.fmean(values):.3f} ± {std} (n={len(values)})"


def load_runs(root: Path) -> list[Run]:
    runs = []
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        match = RUN_NAME.match(path.name)
        if not path.is_dir() or path.name.startswith(EVAL_PREFIX) or not match:
            continue
        by_step = {r["step"]: r for r in read_journal(path / "metrics.jsonl") if "step" in r}
        records = [by_step[s] for s in sorted(by_step)]
        runs.append(Run(path.name, match["arm"], int(match["seed"]), records))
    if not runs:
        raise UsageError(
            f"no training run directories named <arm>-s<seed> in {root}",
            "pass --runs the directory that holds the atrl train --out runs (atrl-s0/, grpo-s0/, ...)",
        )
    return sorted(runs, key=lambda r: (r.arm, r.seed))


def load_eval(path: Path) -> dict[str, Any] | None:
    """metrics.json of an eval run ({"best_of_turns", "last_turn", "by_level"}); None if absent."""
    if (path / "metrics.json").exists():
        return json.loads((path / "metrics.json").read_text())
    if not (path / "episodes.jsonl").exists():
        return None
    from atrl.eval.report import load_episodes, run_metrics

    episodes = load_episodes(path)
    return run_metrics(episodes) if episodes else None


def load_evals(root: Path) -> dict[str, dict[str, Any] | None]:
    return {p.name: load_eval(p) for p in sorted(root.glob(EVAL_PREFIX + "*")) if p.is_dir()}


def link(eval_dir: str, runs: list[Run]) -> tuple[Run, str] | None:
    """The training run an eval belongs to and the eval set's label (longest run name wins)."""
    eval_name = eval_dir[len(EVAL_PREFIX) :]
    for run in sorted(runs, key=lambda r: -len(r.name)):
        if eval_name == run.name:
            return run, "eval"
        if eval_name.endswith("-" + run.name):
            return run, eval_name[: -len(run.name) - 1]
    return None


def training_table(runs: list[Run]) -> list[str]:
    lines = [
        "| run | arm | seed | steps | reward first | reward last | reward last-3 mean | correct_rate mean "
        "| compactions/episode | generation s/step | evaluation s/step | update s/step | generated tokens/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        rewards, correct = run.series("reward_mean"), run.series("correct_rate")
        compactions = run.series("compactions_per_episode")
        times = [run.series(f"time_{phase}_s") for phase in ("generation", "evaluation", "update")]
        rate = run.series("generation_tokens_per_s")
        cells = [
            run.name, run.arm, str(run.seed), str(run.records[-1]["step"] if run.records else 0),
            fmt(rewards[0] if rewards else None), fmt(rewards[-1] if rewards else None), fmt(run.final_reward()),
            fmt(statistics.fmean(correct) if correct else None),
            fmt(statistics.fmean(compactions) if compactions else None, 2),
            *[fmt(statistics.median(t) if t else None, 1) for t in times],
            fmt(statistics.median(rate) if rate else None, 0),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def eval_table(evals: dict[str, dict[str, Any] | None]) -> list[str]:
    lines = [
        "| eval | attempts | compile | correct (best of turns) | correct (last turn) | fast_1 "
        "| geomean speedup (correct) | pass@1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, metrics in evals.items():
        best = (metrics or {}).get("best_of_turns", {})
        last = (metrics or {}).get("last_turn", {})
        attempts = _number(best.get("attempts"))
        cells = [
            name, "n/a" if attempts is None else str(int(attempts)), fmt(best.get("compile_rate")),
            fmt(best.get("correctness")), fmt(last.get("correctness")), fmt(best.get("fast_1")),
            fmt(best.get("speedup_geomean")), fmt(best.get("pass@1")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def arm_table(runs: list[Run], evals: dict[str, dict[str, Any] | None]) -> list[str]:
    linked: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for name, metrics in evals.items():
        if metrics is not None and (found := link(name, runs)) is not None:
            linked.setdefault((found[0].arm, found[1]), []).append(metrics.get("best_of_turns", {}))
    lines = [
        "| arm | eval set | seeds | final reward (last-3 mean) | eval correctness | eval fast_1 |",
        "|---|---|---|---|---|---|",
    ]
    for arm in sorted({r.arm for r in runs}):
        arm_runs = [r for r in runs if r.arm == arm]
        rewards = [v for r in arm_runs if (v := r.final_reward()) is not None]
        for label in sorted(s for a, s in linked if a == arm) or ["n/a"]:
            best = linked.get((arm, label), [])
            values = {key: [v for b in best if (v := _number(b.get(key))) is not None]
                      for key in ("correctness", "fast_1")}
            lines.append(
                f"| {arm} | {label} | {len(arm_runs)} | {mean_std(rewards)} | "
                f"{mean_std(values['correctness'])} | {mean_std(values['fast_1'])} |"
            )
    return lines


def plot_rewards(runs: list[Run], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arms = sorted({r.arm for r in runs})
    seeds = sorted({r.seed for r in runs})
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for run in runs:
        points = [(r["step"], v) for r in run.records if (v := _number(r.get("reward_mean"))) is not None]
        if points:
            ax.plot(*zip(*points, strict=True), color=f"C{arms.index(run.arm) % 10}",
                    linestyle=LINESTYLES[seeds.index(run.seed) % len(LINESTYLES)], label=run.name)
    ax.set_xlabel("step")
    ax.set_ylabel("reward_mean")
    ax.set_title("training reward per step")
    if ax.lines:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def summarize(root: Path, out: Path) -> Path:
    runs, evals = load_runs(root), load_evals(root)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "metrics_all.jsonl").open("w") as fh:
        for run in runs:
            for record in run.records:
                fh.write(dumps({"arm": run.arm, "seed": run.seed, **record}) + "\n")
    plot_rewards(runs, out / "reward_vs_step.png")
    lines = [
        f"# ATRL vs GRPO: experiment summary of `{root}`", "",
        "Generated by `python benchmarks/experiment_summary.py`. Rates are shares in [0, 1]; seconds per "
        "step are medians over steps; eval metrics are over best-of-turns attempts unless marked last turn; "
        "fast_1 is KernelBench's strict fast_p (correct and speedup > 1×).", "",
        "## Training", "", *training_table(runs), "", "![reward vs step](reward_vs_step.png)", "",
        "## Evaluation", "", *(eval_table(evals) if evals else ["No `eval-*` directories."]), "",
        "## Per arm (mean ± sample std over seeds)", "", *arm_table(runs, evals), "",
    ]
    (out / "summary.md").write_text("\n".join(lines))
    return out / "summary.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=Path, required=True, help="directory of <arm>-s<seed>/ and eval-*/ runs")
    parser.add_argument("--out", type=Path, required=True, help="where summary.md and the plot go")
    args = parser.parse_args(argv)
    try:
        print(summarize(args.runs, args.out))
    except UsageError as err:
        print(f"experiment_summary: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
