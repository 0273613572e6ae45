"""Overhead of recording who computed the result: judge time with and without it, side by side.

    TRITON_INTERPRET=1 python benchmarks/provenance_overhead.py [--tasks relu softmax ...] [--repeats 5]
        [--backend interpreter] [--out docs/benchmarks/provenance-overhead.md]

Each builtin task's reference solution is judged in this process by `atrl.harness.stages.judge.judge`
(no worker pool, so only the judge's own time is measured), alternately with the provenance
rule (today's judge: every candidate call recorded, plus the same-storage call) and without it
(`run_trials` given no rule: the judge as it was before). Medians over `--repeats` judgements
per side, and their ratio. The first judgement of each task is a warm-up and is not counted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_TASKS = ["relu", "softmax", "layer_norm", "matmul", "cross_entropy", "conv2d_bias_relu", "mlp_block"]


def _judge_seconds(task, code: str, options, with_provenance: bool) -> tuple[float, bool]:
    from atrl.harness.stages import correctness
    from atrl.harness.stages.judge import judge

    original = correctness.run_trials

    def without_rule(*args, **kwargs):
        kwargs["rule"] = None
        return original(*args, **kwargs)

    if not with_provenance:
        correctness.run_trials = without_rule
    try:
        start = time.perf_counter()
        verdict = judge(task, code, options)
        return time.perf_counter() - start, verdict.ok
    finally:
        correctness.run_trials = original


def measure(task_names: list[str], repeats: int, backend: str) -> list[dict]:
    from atrl.harness.stages.judge import JudgeOptions
    from atrl.tasks.registry import get_task

    options = JudgeOptions(backend=backend, preset="small" if backend == "interpreter" else None)
    rows = []
    for name in task_names:
        task = get_task(f"builtin/{name}")
        if task.solution is None:
            raise SystemExit(f"builtin/{name} has no reference solution; pick a task that has one")
        _judge_seconds(task, task.solution, options, True)  # warm-up: imports, kernel rewriting
        times: dict[bool, list[float]] = {True: [], False: []}
        ok = True
        for i in range(repeats):
            for side in ((True, False) if i % 2 == 0 else (False, True)):
                seconds, accepted = _judge_seconds(task, task.solution, options, side)
                times[side].append(seconds)
                ok = ok and accepted
        before, after = statistics.median(times[False]), statistics.median(times[True])
        rows.append({"task": task.id, "before_s": before, "after_s": after, "ratio": after / before, "ok": ok})
        print(f"{task.id}: {before:.3f} s -> {after:.3f} s ({after / before:.2f}x), accepted: {ok}", flush=True)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| task | judge without provenance (median s) | with provenance (median s) | ratio | accepted |",
             "|---|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['task']} | {r['before_s']:.3f} | {r['after_s']:.3f} | {r['ratio']:.2f}x | "
                     f"{'yes' if r['ok'] else 'NO'} |")
    ratios = [r["ratio"] for r in rows]
    lines.append(f"\nmedian ratio over tasks: {statistics.median(ratios):.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=DEFAULT_TASKS, help="builtin task names")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--backend", default="interpreter", choices=["interpreter", "cuda"])
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    args = parser.parse_args(argv)
    if args.backend == "interpreter" and os.environ.get("TRITON_INTERPRET") != "1":
        print("set TRITON_INTERPRET=1 for the interpreter backend (before triton is imported)", file=sys.stderr)
        return 2
    out = args.out.resolve() if args.out is not None else None
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)  # the judge writes each candidate to a file in the working directory
        rows = measure(args.tasks, args.repeats, args.backend)
    text = table(rows)
    print("\n" + text)
    if out is not None:
        out.write_text(text + "\n")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
