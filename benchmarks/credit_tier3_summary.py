"""Summarise tier 3 of the credit experiment (docs/experiments/atrl-vs-grpo.md): RL on the real harness.

    python benchmarks/credit_tier3_summary.py --runs ROOT --steps N --out DIR

ROOT holds training runs `t3-<arm>-s<seed>` (`atrl train --out`: `metrics.jsonl`)
and held-out evaluations `t3-eval/<arm>-s<seed>-step<k>` and `t3-eval/start` (`atrl eval --out`:
`episodes.jsonl`), as `scripts/experiment_credit.sh tier3 tier3-eval` write them.

Training, per arm over seeds (runs short of N steps are left out and named): the area under the
training reward curve over steps 1..N, the share of episodes with ≥ 2 segments, the share of later
segments (index ≥ 1) whose segment return G is 0 (the episode had already reached its best: the
estimator's known edge; the trainer's `later_zero_return_segments`) and the later segments' mean
advantage. Held-out, per evaluated step: each model's
best-of-turns solved rate, recovery P(solved in a later turn | first turn wrong) and kept rate
P(later turn right | first turn right). Between arms (every pair): the difference in means with a
bootstrap 95% interval (training areas: seeds resampled within arms; held-out: the cluster
bootstrap over tasks and seeds) and the exact permutation test over per-seed values.
And the seed spread of each endpoint with the seeds per arm it implies for power 0.8 at a 5-point
difference (α = 0.05, normal approximation): the pre-registered step after 3 seeds of one arm.
DIR receives summary.md, summary.json, reward_vs_step.png and heldout_vs_step.png (seed bands:
min to max).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from atrl.errors import UsageError
from atrl.eval.breakdown import count_later_turns
from atrl.eval.report import load_episodes
from atrl.rl.experiment_stats import bootstrap_ci, cluster_bootstrap_ci, curve_area, permutation_test
from atrl.rl.run_records import SeedRun, runs_named, seed_band

RUN_NAME = re.compile(r"^t3-(?P<arm>[a-z0-9_]+)-s(?P<seed>\d+)$")
EVAL_NAME = re.compile(r"^(?P<arm>[a-z0-9_]+)-s(?P<seed>\d+)-step(?P<step>\d+)$")


@dataclass
class Run(SeedRun):
    path: Path


def load_runs(root: Path) -> list[Run]:
    runs = [Run(arm=m["arm"], seed=int(m["seed"]), records=records, path=path)
            for m, path, records in runs_named(root, RUN_NAME)]
    if not runs:
        raise UsageError(f"{root} holds no run named t3-<arm>-s<seed> with metrics",
                         "run scripts/experiment_credit.sh tier3 first, or pass its ROOT")
    return runs


def training(runs: list[Run], steps: int) -> dict:
    arms: dict[str, dict] = {}
    for run in runs:
        later = sum(int(r.get("later_segments", 0)) for r in run.records[:steps])
        zero = sum(int(r.get("later_zero_return_segments", 0)) for r in run.records[:steps])
        arm = arms.setdefault(run.arm, {"area": {}, "multi_segment": {}, "later_segments": 0, "later_zero": 0,
                                        "later_adv": []})
        arm["area"][run.seed] = curve_area(run.curve("reward_mean", steps))
        arm["multi_segment"][run.seed] = statistics.fmean(run.curve("multi_segment_fraction", steps))
        arm["later_segments"] += later
        arm["later_zero"] += zero
        arm["later_adv"] += [float(r["adv_seg1_mean"]) for r in run.records[:steps] if r.get("rows_seg1")]
    summary = {
        name: {
            "seeds": len(a["area"]),
            "reward_area": dict(sorted(a["area"].items())),
            "reward_area_mean": statistics.fmean(a["area"].values()),
            "reward_area_std": statistics.stdev(a["area"].values()) if len(a["area"]) > 1 else None,
            "multi_segment_fraction": statistics.fmean(a["multi_segment"].values()),
            "later_segments": a["later_segments"],
            "later_zero_return": a["later_zero"],
            "later_zero_return_share": a["later_zero"] / a["later_segments"] if a["later_segments"] else None,
            "later_advantage_mean": statistics.fmean(a["later_adv"]) if a["later_adv"] else None,
        }
        for name, a in sorted(arms.items())
    }
    pairs = []
    for first, second in itertools.combinations(sorted(arms), 2):
        a, b = list(arms[first]["area"].values()), list(arms[second]["area"].values())
        pairs.append({"arms": [first, second], "difference": statistics.fmean(a) - statistics.fmean(b),
                      "ci95": list(bootstrap_ci(a, b)), "permutation_p": permutation_test(a, b)})
    return {"arms": summary, "comparisons": pairs}


def _rates(run_dir: Path) -> dict:
    episodes = load_episodes(run_dir)
    by_task: dict[str, list[bool]] = {}
    for ep in episodes:
        by_task.setdefault(ep.task_id, []).append(any(t.correct for t in ep.turns))
    later = count_later_turns([[t.correct for t in ep.turns] for ep in episodes])
    return {
        "episodes": len(episodes),
        "solved": {task: statistics.fmean(v) for task, v in sorted(by_task.items())},
        "wrong_first": later.wrong_first, "repaired": later.repaired,
        "right_first": later.right_first, "kept": later.kept,
    }


def heldout(root: Path) -> dict:
    """Per evaluated step: per arm, seed → rates; plus the start's."""
    evals = root / "t3-eval"
    if not evals.is_dir():
        return {}
    out: dict = {"start": _rates(evals / "start") if (evals / "start" / "episodes.jsonl").exists() else None,
                 "steps": {}}
    for path in sorted(evals.iterdir()):
        match = EVAL_NAME.match(path.name)
        if match and (path / "episodes.jsonl").exists():
            by_arm = out["steps"].setdefault(int(match["step"]), {})
            by_arm.setdefault(match["arm"], {})[int(match["seed"])] = _rates(path)
    for arms in out["steps"].values():
        pairs = []
        for first, second in itertools.combinations(sorted(arms), 2):
            a = {s: r["solved"] for s, r in arms[first].items()}
            b = {s: r["solved"] for s, r in arms[second].items()}
            per_seed_a = [statistics.fmean(v.values()) for v in a.values()]
            per_seed_b = [statistics.fmean(v.values()) for v in b.values()]
            pairs.append({"arms": [first, second],
                          "difference": statistics.fmean(per_seed_a) - statistics.fmean(per_seed_b),
                          "ci95": list(cluster_bootstrap_ci(a, b)),
                          "permutation_p": permutation_test(per_seed_a, per_seed_b)})
        arms["comparisons"] = pairs
    return out


def seeds_for_power(stds: list[float], difference: float = 0.05, z_alpha: float = 1.959964,
                    z_power: float = 0.841621) -> int | None:
    """Seeds per arm for a two-sided test at α = 0.05 to find `difference` with power 0.8, from
    per-arm standard deviations over seeds (normal approximation: 2 (z_α + z_β)² σ² / δ²)."""
    if not stds:
        return None
    variance = statistics.fmean(sd**2 for sd in stds)
    return max(2, math.ceil(2 * (z_alpha + z_power) ** 2 * variance / difference**2))


def power(train: dict, held: dict) -> dict:
    """The seed spread of each endpoint (arms with ≥ 2 seeds) and the seeds per arm it implies for
    power 0.8 at a 5-point difference: the pre-registered step after the first 3 seeds of one arm."""
    out: dict = {}
    areas = {arm: a["reward_area_std"] for arm, a in train["arms"].items() if a["reward_area_std"] is not None}
    out["reward_area"] = {"std": areas, "seeds_per_arm": seeds_for_power(list(areas.values()))}
    if held and held["steps"]:
        last = max(held["steps"])
        stds = {arm: statistics.stdev(statistics.fmean(r["solved"].values()) for r in seeds.values())
                for arm, seeds in held["steps"][last].items() if arm != "comparisons" and len(seeds) > 1}
        out["heldout_solved"] = {"step": last, "std": stds, "seeds_per_arm": seeds_for_power(list(stds.values()))}
    return out


def _pooled(rates: list[dict], num: str, den: str) -> str:
    n, d = sum(r[num] for r in rates), sum(r[den] for r in rates)
    return f"{n}/{d} ({n / d:.0%})" if d else "n/a"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def markdown(train: dict, held: dict, powers: dict, steps: int, left_out: dict[str, int]) -> str:
    lines = [f"# Tier 3: RL on the real harness, steps 1–{steps}", ""]
    if left_out:
        lines += ["Left out, short of the steps: " + ", ".join(f"{k} ({n} steps)" for k, n in left_out.items()), ""]
    lines += ["## Training", "", "| arm | seeds | reward area (mean ± std) | per seed | ≥ 2 segments | later segments "
              "with G = 0 | their mean advantage |", "|---|---:|---|---|---:|---:|---:|"]
    for arm, s in train["arms"].items():
        per_seed = ", ".join(f"s{k}: {v:.3f}" for k, v in s["reward_area"].items())
        lines.append(f"| {arm} | {s['seeds']} | {s['reward_area_mean']:.3f} ± {_fmt(s['reward_area_std'])} | "
                     f"{per_seed} | {s['multi_segment_fraction']:.0%} | "
                     f"{_pooled([s], 'later_zero_return', 'later_segments')} | {_fmt(s['later_advantage_mean'])} |")
    lines += ["", "| comparison | difference in reward area | 95% CI (bootstrap over seeds) | permutation p |",
              "|---|---:|---|---:|"]
    for c in train["comparisons"]:
        lines.append(f"| {c['arms'][0]} − {c['arms'][1]} | {c['difference']:+.3f} | "
                     f"[{c['ci95'][0]:+.3f}, {c['ci95'][1]:+.3f}] | {c['permutation_p']:.3f} |")
    if held:
        lines += ["", "## Held-out (best of turns)", "", "| step | model | episodes | solved | recovery | kept |",
                  "|---:|---|---:|---:|---|---|"]
        if held["start"]:
            r = held["start"]
            lines.append(f"| 0 | start | {r['episodes']} | {statistics.fmean(r['solved'].values()):.3f} | "
                         f"{_pooled([r], 'repaired', 'wrong_first')} | {_pooled([r], 'kept', 'right_first')} |")
        for step, arms in sorted(held["steps"].items()):
            for arm, seeds in sorted((k, v) for k, v in arms.items() if k != "comparisons"):
                rates = list(seeds.values())
                solved = statistics.fmean(statistics.fmean(r["solved"].values()) for r in rates)
                lines.append(f"| {step} | {arm} ({len(rates)} seed{'s' * (len(rates) != 1)}) | "
                             f"{sum(r['episodes'] for r in rates)} | "
                             f"{solved:.3f} | {_pooled(rates, 'repaired', 'wrong_first')} | "
                             f"{_pooled(rates, 'kept', 'right_first')} |")
        lines += ["", "| step | comparison | difference in solved rate | 95% CI (cluster bootstrap: tasks, seeds) | "
                  "permutation p |", "|---:|---|---:|---|---:|"]
        for step, arms in sorted(held["steps"].items()):
            for c in arms["comparisons"]:
                lines.append(f"| {step} | {c['arms'][0]} − {c['arms'][1]} | {c['difference']:+.3f} | "
                             f"[{c['ci95'][0]:+.3f}, {c['ci95'][1]:+.3f}] | {c['permutation_p']:.3f} |")
    lines += ["", "## Seeds for power 0.8 at a 5-point difference (α = 0.05, two-sided; from the seed spread)", "",
              "| endpoint | std over seeds, per arm | seeds per arm |", "|---|---|---:|"]
    for name, block in powers.items():
        label = name if "step" not in block else f"{name} (step {block['step']})"
        stds = ", ".join(f"{arm}: {sd:.3f}" for arm, sd in block["std"].items()) or "n/a (no arm has 2 seeds)"
        lines.append(f"| {label} | {stds} | {block['seeds_per_arm'] if block['seeds_per_arm'] else 'n/a'} |")
    return "\n".join(lines) + "\n"


def plot(runs: list[Run], steps: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.8))
    for arm in sorted({r.arm for r in runs}):
        curves = [r.curve("reward_mean", steps) for r in runs if r.arm == arm]
        seed_band(ax, range(1, steps + 1), list(zip(*curves, strict=True)), f"{arm} ({len(curves)} seeds)")
    ax.set_xlabel("training step")
    ax.set_ylabel("mean episode reward")
    ax.set_title("Tier 3: training reward, mean over seeds, band min–max")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_heldout(held: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.8))
    start = statistics.fmean(held["start"]["solved"].values()) if held.get("start") else None
    arms = sorted({arm for by_arm in held["steps"].values() for arm in by_arm if arm != "comparisons"})
    for arm in arms:
        steps = sorted(step for step, by_arm in held["steps"].items() if arm in by_arm)
        rates = [[statistics.fmean(r["solved"].values()) for r in held["steps"][step][arm].values()] for step in steps]
        if start is not None:
            steps, rates = [0, *steps], [[start], *rates]
        seed_band(ax, steps, rates, arm, marker="o")
    ax.set_xlabel("training step (0: the start)")
    ax.set_ylabel("held-out solved rate (best of turns)")
    ax.set_title("Tier 3: held-out, mean over seeds, band min–max")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--steps", type=int, required=True, help="training steps of the endpoint (1..N)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.steps < 1:
            raise UsageError(f"--steps {args.steps} is not a number of steps", "pass --steps 1 or more")
        everything = load_runs(args.runs)
        runs = [r for r in everything if len(r.records) >= args.steps]
        left_out = {f"t3-{r.arm}-s{r.seed}": len(r.records) for r in everything if len(r.records) < args.steps}
        if not runs:
            raise UsageError(f"no run reached {args.steps} steps ({left_out})", "pass a smaller --steps or train on")
        train, held = training(runs, args.steps), heldout(args.runs)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    powers = power(train, held)
    (args.out / "summary.md").write_text(markdown(train, held, powers, args.steps, left_out))
    (args.out / "summary.json").write_text(json.dumps({"steps": args.steps, "left_out": left_out, "training": train,
                                                       "heldout": held, "power": powers}, indent=1) + "\n")
    plot(runs, args.steps, args.out / "reward_vs_step.png")
    if held and held["steps"]:
        plot_heldout(held, args.out / "heldout_vs_step.png")
    print((args.out / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
