"""Summarise tier 2 of the credit experiment (docs/experiments/atrl-vs-grpo.md): the key-relay runs.

    python benchmarks/credit_relay_summary.py --runs ROOT --out DIR [--steps N [--complete-only]]

ROOT holds runs named `<arm>-x<spread>-s<seed>` (scripts/experiment_credit.sh relay), each with
the `metrics.jsonl` of `atrl train`. Per run: the area under the key-relay curve (`key_relay_rate`
averaged over steps 1..N, N = the fewest steps every run reached unless given; with
--complete-only, runs that did not reach N are left out and named) and under the reward curve.
Per spread: each arm's mean ± sample std over seeds, and for every pair of arms the difference
in mean area with its bootstrap 95% interval, the exact permutation test (primary) and the paired
sign-flip test (seeds pair the arms). DIR receives summary.md, summary.json and relay_vs_step.png
(seed bands: min to max over seeds).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from atrl.errors import UsageError
from atrl.rl.experiment_stats import bootstrap_ci, curve_area, permutation_test, sign_flip_test
from atrl.rl.run_records import SeedRun, runs_named, seed_band

RUN_NAME = re.compile(r"^(?P<arm>[a-z0-9_]+)-x(?P<spread>[0-9.]+)-s(?P<seed>\d+)$")
ENDPOINTS = ("key_relay_rate", "reward_mean")


@dataclass
class Run(SeedRun):
    spread: str


def load_runs(root: Path) -> list[Run]:
    runs = [Run(arm=m["arm"], seed=int(m["seed"]), records=records, spread=m["spread"])
            for m, _, records in runs_named(root, RUN_NAME)]
    if not runs:
        raise UsageError(f"{root} holds no run named <arm>-x<spread>-s<seed> with metrics",
                         "run scripts/experiment_credit.sh relay first, or pass its ROOT")
    return runs


def compare(runs: list[Run], steps: int, endpoint: str) -> dict:
    """Per spread: arm summaries and every pairwise comparison of per-seed curve areas."""
    result: dict = {}
    for spread in sorted({r.spread for r in runs}, key=float):
        arms: dict[str, dict[int, float]] = {}
        for run in (r for r in runs if r.spread == spread):
            arms.setdefault(run.arm, {})[run.seed] = curve_area(run.curve(endpoint, steps))
        summary = {arm: {"seeds": len(v), "mean": statistics.fmean(v.values()),
                         "std": statistics.stdev(v.values()) if len(v) > 1 else None,
                         "areas": dict(sorted(v.items()))} for arm, v in sorted(arms.items())}
        pairs = []
        for first, second in itertools.combinations(sorted(arms), 2):
            a, b = arms[first], arms[second]
            shared = sorted(set(a) & set(b))
            pairs.append({
                "arms": [first, second],
                "difference": statistics.fmean(a.values()) - statistics.fmean(b.values()),
                "ci95": list(bootstrap_ci(list(a.values()), list(b.values()))),
                "permutation_p": permutation_test(list(a.values()), list(b.values())),
                "paired_seeds": len(shared),
                "sign_flip_p": sign_flip_test([a[s] - b[s] for s in shared]) if shared else None,
            })
        result[spread] = {"arms": summary, "comparisons": pairs}
    return result


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def markdown(results: dict[str, dict], steps: int, left_out: dict[str, int]) -> str:
    lines = [f"# Key relay: areas under the curve over steps 1–{steps}", ""]
    if left_out:
        lines += ["Left out, short of the steps: " + ", ".join(f"{name} ({n} steps)" for name, n in left_out.items()), ""]
    for endpoint, by_spread in results.items():
        lines += [f"## {endpoint}", "", "| spread | arm | seeds | mean area | std | per-seed areas |", "|---|---|---:|---:|---:|---|"]
        for spread, block in by_spread.items():
            for arm, s in block["arms"].items():
                areas = ", ".join(f"s{k}: {v:.3f}" for k, v in s["areas"].items())
                lines.append(f"| {spread} | {arm} | {s['seeds']} | {s['mean']:.3f} | {_fmt(s['std'])} | {areas} |")
        lines += ["", "| spread | comparison | difference | 95% CI (bootstrap) | permutation p | paired seeds | sign-flip p |",
                  "|---|---|---:|---|---:|---:|---:|"]
        for spread, block in by_spread.items():
            for c in block["comparisons"]:
                lines.append(f"| {spread} | {c['arms'][0]} − {c['arms'][1]} | {c['difference']:+.3f} | "
                             f"[{c['ci95'][0]:+.3f}, {c['ci95'][1]:+.3f}] | {c['permutation_p']:.3f} | "
                             f"{c['paired_seeds']} | {_fmt(c['sign_flip_p'])} |")
        lines.append("")
    return "\n".join(lines)


def plot(runs: list[Run], steps: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spreads = sorted({r.spread for r in runs}, key=float)
    fig, axes = plt.subplots(1, len(spreads), figsize=(5 * len(spreads), 3.6), squeeze=False, sharey=True)
    for ax, spread in zip(axes[0], spreads, strict=True):
        for arm in sorted({r.arm for r in runs if r.spread == spread}):
            curves = [r.curve("key_relay_rate", steps) for r in runs if r.spread == spread and r.arm == arm]
            seed_band(ax, range(1, steps + 1), list(zip(*curves, strict=True)), f"{arm} ({len(curves)} seeds)")
        ax.set_title(f"first-attempt noise spread {spread}")
        ax.set_xlabel("training step")
        ax.set_ylim(0, 1)
        ax.legend()
    axes[0][0].set_ylabel("episodes that relayed the key")
    fig.suptitle("Key relay across a compaction: mean over seeds, band min–max")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=None, help="steps per curve (default: the fewest any run has)")
    parser.add_argument("--complete-only", action="store_true",
                        help="leave out (and name) the runs with fewer than --steps steps")
    args = parser.parse_args(argv)
    if args.complete_only and not args.steps:
        parser.error("--complete-only needs --steps N: the steps a run must have reached to be kept")
    try:
        runs = load_runs(args.runs)
    except UsageError as exc:
        print(f"error: {exc} — {exc.fix}", file=sys.stderr)
        return 2
    left_out: dict[str, int] = {}
    if args.complete_only:
        left_out = {f"{r.arm}-x{r.spread}-s{r.seed}": len(r.records) for r in runs if len(r.records) < args.steps}
        runs = [r for r in runs if len(r.records) >= args.steps]
        if not runs:
            print(f"error: no run reached {args.steps} steps — finish the runs or give fewer --steps", file=sys.stderr)
            return 2
    reached = min(len(r.records) for r in runs)
    steps = args.steps or reached
    if steps > reached:
        print(f"error: --steps {steps}, but a run has only {reached} steps — use --steps {reached}, finish the runs, "
              "or add --complete-only to leave the shorter runs out", file=sys.stderr)
        return 2
    results = {endpoint: compare(runs, steps, endpoint) for endpoint in ENDPOINTS}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(
        json.dumps({"steps": steps, "left_out": left_out, "results": results}, indent=1) + "\n")
    (args.out / "summary.md").write_text(markdown(results, steps, left_out) + "\n")
    plot(runs, steps, args.out / "relay_vs_step.png")
    print(f"{len(runs)} runs, {steps} steps each -> {args.out}/summary.md"
          + (f"; left out, short of {steps} steps: {', '.join(left_out)}" if left_out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
