"""Harness throughput, latency and timing stability, printed as markdown tables.

Modes (`--mode`):
  throughput  evaluate the builtin suite's reference solutions plus one wrong-value variant of
              each (the last `tl.store` writes `value + 1`) through `Harness.evaluate_many`:
              evaluations/minute, time per stage (median and total, seconds), and on a timed
              backend the ratio of wall time to the device time timing itself needs
              (timed_calls × (reference + candidate) ms per timed candidate).
  stability   evaluate one task's solution `--repeats` times with the cache off: coefficient of
              variation of the measured candidate time, and its agreement with an independent
              measurement (`torch.profiler` device time of the same module, L2 flushed before each
              call). Needs a timed backend.
  latency     evaluate level-1 solutions one at a time (worker already warm): median and p90 wall
              seconds per evaluation — the interpreter's turn-around time for an agent.

Example: python benchmarks/harness_throughput.py --backend interpreter --level 1 --limit 6
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

from atrl.harness.api import Harness
from atrl.harness.verdict import Verdict
from atrl.tasks.registry import load_suite
from atrl.tasks.task import Task

STAGES = ("compile", "correctness", "profile")


class _PlusOne(ast.NodeTransformer):
    """Rewrites the value argument of the last `tl.store(ptr, value, ...)` to `value + 1`."""

    def __init__(self, target: ast.Call) -> None:
        self.target = target

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if node is self.target and len(node.args) >= 2:
            node.args[1] = ast.BinOp(left=node.args[1], op=ast.Add(), right=ast.Constant(1))
        return node


def wrong_variant(solution: str) -> str | None:
    """The solution with its last `tl.store` writing `value + 1`; None when it has no such store."""
    tree = ast.parse(solution)
    stores = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr == "store" and len(n.args) >= 2]
    if not stores:
        return None
    last = max(stores, key=lambda n: (n.lineno, n.col_offset))
    return ast.unparse(ast.fix_missing_locations(_PlusOne(last).visit(tree)))


def select_tasks(level: int | None, names: list[str] | None, limit: int | None) -> list[Task]:
    tasks = [t for t in load_suite("builtin", level=level).tasks if t.solution and not t.skipped]
    if names:
        tasks = [t for t in tasks if t.name in names or t.id in names]
    return tasks[:limit] if limit else tasks


def _harness(args: argparse.Namespace, use_cache: bool = False, workers: int | None = None) -> Harness:
    return Harness(backend=args.backend, workers=workers or args.workers, trials=args.trials,
                   timed_calls=args.timed_calls, preset=args.preset, use_cache=use_cache)


def _stage_rows(verdicts: list[Verdict]) -> list[str]:
    rows = ["| stage | evaluations | median s | total s |", "|---|---:|---:|---:|"]
    for stage in STAGES:
        seconds = [v.stage_seconds[stage] for v in verdicts if stage in v.stage_seconds]
        if seconds:
            rows.append(f"| {stage} | {len(seconds)} | {statistics.median(seconds):.3f} | {sum(seconds):.1f} |")
    return rows


def run_throughput(args: argparse.Namespace) -> str:
    tasks = select_tasks(args.level, args.tasks, args.limit)
    pairs = [(t, t.solution) for t in tasks]
    if not args.no_wrong:
        pairs += [(t, wrong) for t in tasks if (wrong := wrong_variant(t.solution)) is not None]
    with _harness(args) as harness:
        # boot every worker first, so the measurement is of evaluation, not of importing torch
        harness.evaluate_many([(tasks[0], tasks[0].solution)] * harness.workers)
        start = time.monotonic()
        verdicts = harness.evaluate_many(pairs, progress=_progress if args.verbose else None)
        wall = time.monotonic() - start
        backend, device, workers, preset = harness.backend.name, harness.device, harness.workers, harness.preset
    right = sum(v.ok for v in verdicts[: len(tasks)])
    wrong_caught = sum(not v.ok for v in verdicts[len(tasks):])
    lines = [f"## Harness throughput — {backend} ({device}), preset {preset}, {workers} workers, "
             f"trials={args.trials}, timed_calls={args.timed_calls}", "",
             "| evaluations | wall s | evaluations/min | solutions correct | wrong variants rejected |",
             "|---:|---:|---:|---:|---:|",
             f"| {len(verdicts)} | {wall:.1f} | {len(verdicts) / wall * 60:.1f} | {right}/{len(tasks)} | "
             f"{wrong_caught}/{len(verdicts) - len(tasks)} |", "", *_stage_rows(verdicts)]
    timed = [v for v in verdicts if v.timing is not None]
    if timed:
        needed_s = sum(args.timed_calls * (v.timing.reference_ms + v.timing.candidate_ms) for v in timed) / 1000
        lines += ["", "| timed candidates | device time timing needs, s | wall / needed |", "|---:|---:|---:|",
                  f"| {len(timed)} | {needed_s:.2f} | {wall / needed_s:.1f} |"]
    failures = [f"- {v.task_id}: {v.error_class}: {v.message.splitlines()[0][:120] if v.message else ''}"
                for v in verdicts[: len(tasks)] if not v.ok]
    if failures:
        lines += ["", "Reference solutions that failed:", *failures]
    return "\n".join(lines)


def run_latency(args: argparse.Namespace) -> str:
    tasks = select_tasks(args.level if args.level is not None else 1, args.tasks, args.limit)
    with _harness(args, workers=1) as harness:
        harness.evaluate(tasks[0], tasks[0].solution)  # boot the worker
        walls, rows = [], []
        for task in tasks:
            start = time.monotonic()
            verdict = harness.evaluate(task, task.solution)
            walls.append(time.monotonic() - start)
            rows.append(f"| {task.id} | {'ok' if verdict.ok else verdict.error_class} | {walls[-1]:.2f} |")
        backend, preset = harness.backend.name, harness.preset
    p90 = sorted(walls)[max(0, int(round(0.9 * len(walls))) - 1)]
    return "\n".join([f"## Evaluation latency — {backend}, preset {preset}, trials={args.trials}, one warm worker",
                      "", "| tasks | median s | p90 s | max s |", "|---:|---:|---:|---:|",
                      f"| {len(walls)} | {statistics.median(walls):.2f} | {p90:.2f} | {max(walls):.2f} |", "",
                      "| task | verdict | wall s |", "|---|---|---:|", *rows])


def _load_module(name: str, source: str, directory: str):
    path = Path(directory) / f"{name}.py"
    path.write_text(source)  # triton.jit reads kernel source from a real file
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def independent_device_ms(task: Task, preset: str | None, calls: int) -> float:
    """Mean device time per call of the task's own solution, from `torch.profiler` kernel times,
    with the L2 flushed before each call (flush kernels are excluded by name)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from atrl.backends import resolve_backend

    backend = resolve_backend("cuda")
    dtype = getattr(torch, task.dtype)
    with tempfile.TemporaryDirectory() as directory:
        reference = _load_module("bench_reference", task.source_at(preset), directory)
        solution = _load_module("bench_solution", task.solution, directory)
        model = solution.ModelNew(*reference.get_init_inputs()).to(backend.device)
        inputs = [x.to(backend.device, dtype if x.is_floating_point() else x.dtype) if torch.is_tensor(x) else x
                  for x in reference.get_inputs()]
        for _ in range(10):
            model(*inputs)
        backend.synchronize()

        def kernel_times(run_model: bool) -> dict[str, float]:
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(calls):
                    backend.flush_cache()
                    if run_model:
                        model(*inputs)
                backend.synchronize()
            # self time: a CPU op's device time is its kernels', which are counted themselves
            found = {e.key: float(getattr(e, "self_device_time_total", 0.0) or 0.0) / 1000
                     for e in prof.key_averages()}
            return {name: ms for name, ms in found.items() if ms > 0}

        flush_names = set(kernel_times(run_model=False))
        return sum(ms for name, ms in kernel_times(run_model=True).items() if name not in flush_names) / calls


def run_stability(args: argparse.Namespace) -> str:
    [task] = select_tasks(None, [args.task], None) or [None]
    if task is None:
        raise SystemExit(f"no builtin task with a solution named {args.task!r}")
    with _harness(args, workers=1) as harness:
        if not harness.backend.timed:
            raise SystemExit(f"--mode stability needs a timed backend; {harness.backend.name} is not timed")
        verdicts = [harness.evaluate(task, task.solution) for _ in range(args.repeats)]
        preset, device = harness.preset, harness.device
    bad = [v for v in verdicts if v.timing is None]
    if bad:
        raise SystemExit(f"an evaluation was not timed: {bad[0].error_class}: {bad[0].message[:200]}")
    times = [v.timing.candidate_ms for v in verdicts]
    mean = statistics.fmean(times)
    cv = statistics.stdev(times) / mean if len(times) > 1 else 0.0
    profiler_ms = independent_device_ms(task, preset, args.timed_calls)
    return "\n".join([f"## Timing stability — {task.id} on {device}, preset {preset}, {args.repeats} evaluations",
                      "", "| median ms | mean ms | CV | torch.profiler ms | harness / profiler |",
                      "|---:|---:|---:|---:|---:|",
                      f"| {statistics.median(times):.4f} | {mean:.4f} | {cv:.2%} | {profiler_ms:.4f} | "
                      f"{statistics.median(times) / profiler_ms:.3f} |", "",
                      "Per evaluation (ms): " + ", ".join(f"{t:.4f}" for t in times),
                      "Speedups: " + ", ".join(f"{v.timing.speedup:.2f}" for v in verdicts)])


def _progress(done: int, total: int, verdict: Verdict) -> None:
    print(f"[{done}/{total}] {verdict.task_id}: {'ok' if verdict.ok else verdict.error_class}", file=sys.stderr)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=("throughput", "stability", "latency"), default="throughput")
    parser.add_argument("--backend", default="auto", help="auto | cuda | interpreter")
    parser.add_argument("--preset", default=None, help="task size preset (default: the backend's)")
    parser.add_argument("--level", type=int, default=None, help="only tasks of this level")
    parser.add_argument("--tasks", type=lambda s: s.split(","), default=None, help="comma-separated task names")
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: the harness's)")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--timed-calls", type=int, default=100)
    parser.add_argument("--no-wrong", action="store_true", help="skip the wrong-value variants")
    parser.add_argument("--task", default="softmax", help="stability mode: the task to repeat")
    parser.add_argument("--repeats", type=int, default=5, help="stability mode: evaluations")
    parser.add_argument("--output", type=Path, default=None, help="also write the markdown here")
    parser.add_argument("--verbose", action="store_true", help="print each verdict as it finishes")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report = {"throughput": run_throughput, "stability": run_stability, "latency": run_latency}[args.mode](args)
    print(report)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
