"""Reliability soak: N evaluations through one Harness, a share of them faulty, nothing lost.

The mix: `--faulty` (default 20%) of the jobs are the fault candidates of
`tests/adversarial/faults/` (endless loops in Python and in a kernel, unbounded allocation, deep
recursion, a flood of printed output, an out-of-bounds store that kills the worker), round robin;
the rest alternate between builtin reference solutions (correct) and the same solutions with the
kernel's result perturbed (wrong: `correctness:mismatch`). Every job's expected verdict class is
known, so the soak checks each verdict, not just their count.

Recorded: verdicts returned (must equal N), verdict classes, wall time, worker process count and
parent + worker resident memory (MiB) at start, middle and end (psutil when installed, else
/proc). Asserted (exit status 1 otherwise): no verdict lost, every verdict of its expected class,
no worker process left after close, parent RSS growth bounded by `--max-rss-growth-mib`.

    python benchmarks/reliability_soak.py --n 1000 --workers 2            # interpreter (CPU)
    python benchmarks/reliability_soak.py --backend cuda --n 200          # a GPU host
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAULTS_DIR = ROOT / "tests" / "adversarial" / "faults"
SOLVED_TASKS = ("builtin/relu", "builtin/add", "builtin/softmax", "builtin/leaky_relu", "builtin/silu")
_HEADER = re.compile(r"^#\s*(expect|class|task):\s*(.+?)\s*$", re.M)


def fault_candidates() -> list[tuple[str, str, str, str]]:
    """(name, task id, expected class or "ok", source) of every fault candidate file."""
    out = []
    for path in sorted(FAULTS_DIR.glob("*.py")):
        source = path.read_text()
        header = dict(_HEADER.findall(source))
        out.append((path.stem, header["task"], header["expect"], source))
    return out


def wrong_solution(source: str) -> str:
    """A reference solution whose stored result is off by one: judged `correctness:mismatch`."""
    stores = list(re.finditer(r"tl\.store\(([^,]+), (.+), mask=(\w+)\)", source))
    if not stores:
        raise ValueError("no masked tl.store to perturb")
    last = stores[-1]
    return (source[: last.start()] + f"tl.store({last.group(1)}, {last.group(2)} + 1.0, mask={last.group(3)})"
            + source[last.end():])


def build_jobs(n: int, faulty: float) -> list[tuple[str, str, str, str]]:
    """N jobs (kind, task id, expected class or "ok", source), faults spread evenly through the run."""
    from atrl.tasks.registry import get_task

    faults = fault_candidates()
    solved = [(t, get_task(t).solution) for t in SOLVED_TASKS]
    n_faulty = round(n * faulty)
    jobs = []
    for i in range(n):
        # Spread the faulty jobs evenly, so every stretch of the run sees crashes and restarts.
        if n_faulty and (i * n_faulty) // n != ((i + 1) * n_faulty) // n:
            name, task, expect, source = faults[len([j for j in jobs if j[0].startswith("fault:")]) % len(faults)]
            jobs.append((f"fault:{name}", task, expect, source))
            continue
        task, source = solved[i % len(solved)]
        # The index comment makes every source unique, so no verdict comes from any cache.
        tagged = f"# soak job {i}\n{source}"
        if (i // len(solved)) % 2:
            jobs.append(("wrong", task, "correctness:mismatch", wrong_solution(tagged)))
        else:
            jobs.append(("correct", task, "ok", tagged))
    return jobs


def _rss_mib(pid: int) -> float | None:
    try:
        import psutil

        return psutil.Process(pid).memory_info().rss / 2**20
    except ImportError:
        pass
    except Exception:  # noqa: BLE001 - a process that just exited
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _children(pid: int) -> list[int]:
    """Every live descendant process of `pid` (workers and anything they started)."""
    try:
        import psutil

        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except ImportError:
        pass
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == current]
        found.extend(kids)
        frontier.extend(kids)
    return found


def sample(label: str, harness) -> dict:
    """Process count and resident memory of the parent and its workers now."""
    workers = harness._pool.worker_pids() if harness._pool is not None else []
    worker_rss = [r for r in (_rss_mib(p) for p in workers) if r is not None]
    return {"at": label, "workers": len(workers), "processes": len(_children(os.getpid())),
            "parent_rss_mib": round(_rss_mib(os.getpid()) or 0.0, 1),
            "workers_rss_mib": round(sum(worker_rss), 1),
            "max_worker_rss_mib": round(max(worker_rss, default=0.0), 1)}


def run_soak(n: int, workers: int, backend: str, faulty: float, trials: int, timeout_s: float) -> dict:
    """Run the soak; returns the results record (see the module docstring)."""
    from atrl.harness.api import Harness

    jobs = build_jobs(n, faulty)
    samples: list[dict] = []
    harness = Harness(backend=backend, workers=workers, trials=trials, use_cache=False,
                      stage_timeouts={"compile": timeout_s, "correctness": timeout_s, "profile": 4 * timeout_s})
    start = time.monotonic()

    def progress(done: int, total: int, verdict) -> None:
        if done == 1:
            # evaluate_many reports only after every job is submitted (static checks run then)
            samples.append(sample("first verdict reported", harness))
        elif done == total:
            samples.append(sample("end (before close)", harness))
        elif done % max(1, total // 10) == 0:
            samples.append(sample(f"{done} verdicts", harness))
        if done % 50 == 0:
            print(f"{done}/{total} verdicts, {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)

    samples.append(sample("before (no worker yet)", harness))
    try:
        verdicts = harness.evaluate_many([(task, source) for _, task, _, source in jobs], progress=progress)
    finally:
        harness.close()
    wall = time.monotonic() - start
    time.sleep(0.5)
    leaked = _children(os.getpid())
    classes = Counter(v.error_class or "ok" for v in verdicts)
    wrong_class = [(kind, expect, v.error_class or "ok", (v.message or "")[:300])
                   for (kind, _, expect, _), v in zip(jobs, verdicts, strict=False) if (v.error_class or "ok") != expect]
    by_kind: dict[str, Counter] = {}
    for (kind, _, _, _), v in zip(jobs, verdicts, strict=False):
        by_kind.setdefault(kind, Counter())[v.error_class or "ok"] += 1
    return {"n": n, "workers": workers, "backend": backend, "faulty_share": faulty, "trials": trials,
            "verdicts": len(verdicts), "wall_s": round(wall, 1), "classes": dict(classes),
            "by_kind": {k: dict(c) for k, c in sorted(by_kind.items())}, "unexpected": wrong_class,
            "samples": samples, "leaked_processes": leaked}


def check(result: dict, max_rss_growth_mib: float) -> list[str]:
    """The soak's failures (empty when it passed)."""
    problems = []
    if result["verdicts"] != result["n"]:
        problems.append(f"{result['n'] - result['verdicts']} verdicts lost")
    if result["unexpected"]:
        problems.append(f"{len(result['unexpected'])} verdicts of an unexpected class")
    if result["leaked_processes"]:
        problems.append(f"processes left after close: {result['leaked_processes']}")
    rss = [s["parent_rss_mib"] for s in result["samples"]]
    if len(rss) >= 2 and rss[-1] - rss[0] > max_rss_growth_mib:
        problems.append(f"parent RSS grew {rss[-1] - rss[0]:.0f} MiB (limit {max_rss_growth_mib:.0f})")
    return problems


def markdown(result: dict, problems: list[str]) -> str:
    lines = [f"N = {result['n']}, backend {result['backend']}, {result['workers']} workers, "
             f"{100 * result['faulty_share']:.0f}% faulty, {result['trials']} trials",
             "", "| verdicts returned | wall time (s) | per verdict (s) | unexpected classes | leaked processes |",
             "|---:|---:|---:|---:|---:|",
             f"| {result['verdicts']}/{result['n']} | {result['wall_s']} | {result['wall_s'] / max(1, result['n']):.2f} "
             f"| {len(result['unexpected'])} | {len(result['leaked_processes'])} |",
             "", "| job kind | verdict classes |", "|---|---|"]
    for kind, classes in result["by_kind"].items():
        lines.append(f"| {kind} | {', '.join(f'{c}: {k}' for c, k in sorted(classes.items()))} |")
    lines += ["", "| sample | workers | processes | parent RSS (MiB) | workers RSS (MiB) | largest worker (MiB) |",
              "|---|---:|---:|---:|---:|---:|"]
    for s in result["samples"]:
        lines.append(f"| {s['at']} | {s['workers']} | {s['processes']} | {s['parent_rss_mib']} "
                     f"| {s['workers_rss_mib']} | {s.get('max_worker_rss_mib', '')} |")
    lines += ["", "result: " + ("PASS" if not problems else "FAIL: " + "; ".join(problems))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Reliability soak of the harness (see the module docstring).")
    parser.add_argument("--n", type=int, default=1000, help="evaluations")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", default="interpreter", help="interpreter | cuda")
    parser.add_argument("--faulty", type=float, default=0.2, help="share of fault candidates")
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0, help="compile/correctness stage limit, s")
    parser.add_argument("--max-rss-growth-mib", type=float, default=300.0)
    parser.add_argument("--json", type=Path, help="also write the results record here")
    args = parser.parse_args(argv)
    result = run_soak(args.n, args.workers, args.backend, args.faulty, args.trials, args.timeout)
    problems = check(result, args.max_rss_growth_mib)
    print(markdown(result, problems))
    for item in result["unexpected"][:10]:
        print("unexpected:", item, file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
