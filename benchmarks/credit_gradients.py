"""Tier 1 of the credit experiment (docs/experiments/atrl-vs-grpo.md): estimators on fixed rollouts.

    python benchmarks/credit_gradients.py --run DIR --model SPEC [--group-size G] [--arms seg,traj,grpo]
        [--dim 8192] [--splits 500] [--bootstrap 300] --out DIR
    python benchmarks/credit_gradients.py --from-gradients DIR/gradients.pt --out DIR2   # no model, no GPU

DIR is an `atrl eval --out` directory (each task's samples form a group; collect with
`--samples 8` and the training agent settings) or an `atrl train --out` directory with its
`--group-size`. SPEC is the policy that generated them (`hf:DIR`, `smollm2-135m`, `tiny-random`).
For each arm: split-half agreement of the mean gradient (mean over random halvings, with the
2.5-97.5 percentiles over halvings), gradient signal-to-noise, and the shares of segments ≥ 2 and
of summary tokens; and the first arm minus each other arm, paired (the same halvings, the same
bootstrap draws of groups: the rollouts are shared). Writes gradients.md and gradients.json to --out,
and the per-group sketched gradients (gradients.pt, float16, arm -> part -> groups × dim) from which
`--from-gradients` computes the same tables again (another statistic, more resamples) on a CPU.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
import time
from pathlib import Path

import torch

from atrl.errors import UsageError
from atrl.rl.credit_gradients import (
    CountSketch,
    EstimatorArm,
    bootstrap,
    estimator_gradients,
    load_groups,
    share,
    signal_to_noise,
    split_half_cosines,
)

ARMS = {
    "seg": EstimatorArm("seg", "atrl", "segment"),
    "traj": EstimatorArm("traj", "atrl", "trajectory"),
    "grpo": EstimatorArm("grpo", "grpo", "trajectory"),
    "drgrpo": EstimatorArm("drgrpo", "drgrpo", "trajectory"),
}


def _model(spec: str, out: Path):
    """The policy's model in fp32, trainable, and its pad id."""
    from atrl.rl.trainer import _load_policy

    policy = _load_policy(spec, out)
    model = policy.model.float().requires_grad_(True).eval()
    tokenizer = getattr(policy, "tokenizer", None)
    pad = getattr(tokenizer, "pad_token_id", None)
    return model, pad if pad is not None else (getattr(tokenizer, "eos_token_id", None) or 0)


def _percentiles(values: list[float]) -> list[float]:
    ordered = sorted(values)
    return [ordered[int(0.025 * (len(ordered) - 1))], ordered[int(0.975 * (len(ordered) - 1))]]


def measure(grads: dict[str, torch.Tensor], splits: int, resamples: int) -> dict:
    whole = grads["all"]
    n = whole.shape[0]
    cosines = split_half_cosines(whole, splits)
    result = {
        "groups": n,
        "groups_with_signal": int((whole.abs().sum(1) > 0).sum()),
        "split_half_cosine": statistics.fmean(cosines),
        # over random halvings: a bootstrap over groups would put one group in both halves
        "split_half_cosine_ci95": _percentiles(cosines),
        "signal_to_noise": signal_to_noise(whole),
        "signal_to_noise_ci95": list(bootstrap(lambda idx: signal_to_noise(whole[idx]), n, resamples,
                                               estimate=signal_to_noise(whole))),
    }
    for key, part in (("share_later_segments", grads["later_segments"]), ("share_summaries", grads["summaries"])):
        # moved by the bootstrap's bias too: a resample's sum carries the noise twice, which pulls
        # every share towards the noise's own share, so an unmoved interval can miss its estimate
        result[key] = share(part, whole)
        result[f"{key}_ci95"] = list(bootstrap(lambda idx, part=part: share(part[idx], whole[idx]), n, resamples,
                                               estimate=result[key]))
    return result


def difference(a: torch.Tensor, b: torch.Tensor, splits: int, resamples: int) -> dict:
    """Arm a minus arm b on the same groups: split-half cosine over the same halvings, and
    signal-to-noise over the same bootstrap draws of groups (paired: the rollouts are shared)."""
    cosines = [x - y for x, y in zip(split_half_cosines(a, splits), split_half_cosines(b, splits), strict=True)]
    n = a.shape[0]
    return {
        "split_half_cosine": statistics.fmean(cosines),
        "split_half_cosine_ci95": _percentiles(cosines),
        "split_half_cosine_share_above_0": sum(c > 0 for c in cosines) / len(cosines),
        "signal_to_noise": signal_to_noise(a) - signal_to_noise(b),
        "signal_to_noise_ci95": list(bootstrap(lambda idx: signal_to_noise(a[idx]) - signal_to_noise(b[idx]),
                                               n, resamples, estimate=signal_to_noise(a) - signal_to_noise(b))),
    }


def markdown(results: dict[str, dict], groups: int, episodes: int, differences: dict[str, dict]) -> str:
    def ci(r: dict, key: str) -> str:
        low, high = r[f"{key}_ci95"]
        return f"{r[key]:.3f} [{low:.3f}, {high:.3f}]"

    lines = [f"# Estimators on fixed rollouts: {groups} groups, {episodes} episodes", "",
             "| arm | groups with signal | split-half cosine | signal-to-noise | share: segments ≥ 2 | share: summaries |",
             "|---|---:|---|---|---|---|"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['groups_with_signal']}/{r['groups']} | {ci(r, 'split_half_cosine')} | "
                     f"{ci(r, 'signal_to_noise')} | {ci(r, 'share_later_segments')} | {ci(r, 'share_summaries')} |")
    if differences:
        lines += ["", "| difference | split-half cosine | halvings with a > b | signal-to-noise |", "|---|---|---:|---|"]
        for name, d in differences.items():
            lines.append(f"| {name} | {ci(d, 'split_half_cosine')} | {d['split_half_cosine_share_above_0']:.0%} | "
                         f"{ci(d, 'signal_to_noise')} |")
    lines += ["", "Intervals: split-half cosine, 2.5-97.5 percentiles over random halvings of the groups; "
              "the others, bootstrap 95% over groups. Differences are paired: the same halvings, the same "
              "bootstrap draws."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path)
    parser.add_argument("--model")
    parser.add_argument("--from-gradients", type=Path, help="a gradients.pt written by an earlier run")
    parser.add_argument("--group-size", type=int, default=None)
    parser.add_argument("--arms", default="seg,traj,grpo")
    parser.add_argument("--dim", type=int, default=8192)
    parser.add_argument("--splits", type=int, default=500)
    parser.add_argument("--bootstrap", type=int, default=300)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.from_gradients is not None:
        return _summarise_saved(args)
    if args.run is None or args.model is None:
        print("error: --run and --model are required — or give --from-gradients FILE", file=sys.stderr)
        return 2
    try:
        unknown = [a for a in args.arms.split(",") if a not in ARMS]
        if unknown:
            raise UsageError(f"unknown arm(s) {', '.join(unknown)}", f"use some of {', '.join(ARMS)}")
        groups = load_groups(args.run, args.group_size)
        if len(groups) < 4:
            raise UsageError(f"{args.run} gives {len(groups)} groups", "collect at least 4 tasks with several samples each")
    except UsageError as exc:
        print(f"error: {exc} — {exc.fix}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    model, pad_id = _model(args.model, args.out)
    device = next(model.parameters()).device
    sketch = CountSketch(model, args.dim)
    names = args.arms.split(",")
    start = time.perf_counter()
    grads = estimator_gradients(model, groups, [ARMS[name] for name in names], sketch, pad_id, device,
                                autocast=device.type == "cuda",
                                progress=lambda done: print(f"groups {done}/{len(groups)} "
                                                            f"({time.perf_counter() - start:.0f} s)", flush=True))
    seconds = time.perf_counter() - start
    episodes = sum(len(g) for g in groups)
    saved = {name: {part: g.cpu().half() for part, g in grads[name].items()} for name in names}
    torch.save({"episodes": episodes, "gradients": saved}, args.out / "gradients.pt")
    _write_tables(grads, names, episodes, seconds, args)
    return 0


def _summarise_saved(args: argparse.Namespace) -> int:
    """The tables again from an earlier run's gradients.pt (its arms, in its order)."""
    try:
        record = torch.load(args.from_gradients, map_location="cpu")
        grads = {name: {part: g.double() for part, g in parts.items()} for name, parts in record["gradients"].items()}
    except (OSError, KeyError, TypeError, ValueError, RuntimeError, EOFError, pickle.UnpicklingError) as exc:
        print(f"error: cannot read {args.from_gradients}: {exc} — give a gradients.pt written by this script",
              file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    _write_tables(grads, list(grads), int(record.get("episodes", 0)), None, args)
    return 0


def _write_tables(grads: dict, names: list[str], episodes: int, seconds: float | None, args) -> None:
    results = {}
    for name in names:
        results[name] = measure(grads[name], args.splits, args.bootstrap)
        print(f"{name}: split-half cosine {results[name]['split_half_cosine']:.3f}", flush=True)
    differences = {f"{names[0]} − {name}": difference(grads[names[0]]["all"], grads[name]["all"], args.splits,
                                                       args.bootstrap) for name in names[1:]}
    groups = next(iter(grads[names[0]].values())).shape[0]
    record = {"groups": groups, "episodes": episodes, "results": results, "differences": differences}
    if seconds is not None:
        record["gradient_seconds"] = round(seconds, 1)
    (args.out / "gradients.json").write_text(json.dumps(record, indent=1) + "\n")
    (args.out / "gradients.md").write_text(markdown(results, groups, episodes, differences) + "\n")
    print(f"-> {args.out}/gradients.md")


if __name__ == "__main__":
    sys.exit(main())
