"""The Ray harness against the in-process harness on the same candidates, side by side.

Candidates: per builtin task with a reference solution, the solution, its wrong-value variant
(the last `tl.store` writes `value + 1`), a PyTorch-only module (rejected by the static checks)
and an answer without code. Both harnesses have the same number of worker processes (`--actors`
× `--workers`), are warmed up first (every worker started), then judge all candidates with the
cache off, alternating which goes first, `--repeats` times. Reported: whether every verdict is
identical (stage, class, correctness counts; the score too on an untimed backend), median wall
seconds of each, the Ray wall-time overhead per evaluation and as a share of the Ray wall time,
and the Ray round trip per job measured inside the dispatcher (answer time minus time on the
actor) with its share of the jobs' latency.

Interpreter (this repository's CPU run):
  python benchmarks/ray_harness.py --backend interpreter --level 1 --limit 6 --actors 2 --workers 1
One H200 (152 candidates, 76 of them judged on the GPU):
  python benchmarks/ray_harness.py --backend cuda --level 1 --actors 1 --workers 4 --out docs/benchmarks/ray-harness-h200.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from harness_throughput import select_tasks, wrong_variant  # noqa: E402

from atrl.harness.api import Harness  # noqa: E402
from atrl.harness.distributed.fleet import FleetOptions, connect, stop_fleet  # noqa: E402
from atrl.harness.distributed.ray_harness import RayHarness  # noqa: E402
from atrl.harness.select import gib_bytes  # noqa: E402
from atrl.harness.verdict import Verdict  # noqa: E402
from atrl.tasks.task import Task  # noqa: E402

TORCH_ONLY = ("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, *args):\n"
              "        return args[0]\n")
NO_CODE = "I cannot write this kernel."


def candidates(tasks: list[Task]) -> list[tuple[Task, str]]:
    pairs = []
    for task in tasks:
        pairs.append((task, task.solution))
        wrong = wrong_variant(task.solution)
        if wrong is not None:
            pairs.append((task, wrong))
        pairs += [(task, TORCH_ONLY), (task, NO_CODE)]
    return pairs


def identity(verdict: Verdict, timed: bool) -> tuple:
    """What must agree between the two harnesses (timing varies from run to run on a GPU)."""
    stats = verdict.correctness
    return (verdict.task_id, verdict.candidate_hash, verdict.stage, verdict.ok, verdict.error_class,
            stats.passed if stats else None, stats.trials if stats else None, None if timed else verdict.score)


def warm_up(harness: Harness, task: Task) -> None:
    """Start every worker: one distinct candidate per worker, judged at once."""
    harness.evaluate_many([(task, f"{task.solution}\n# warm-up {i}\n") for i in range(harness.workers)])


def run(args: argparse.Namespace) -> dict:
    tasks = select_tasks(args.level, None, args.limit)
    pairs = candidates(tasks)
    options = dict(backend=args.backend, trials=args.trials, preset=args.preset, use_cache=False,
                   memory_capacity=gib_bytes(args.memory_gib))
    connect(args.address)
    fleet = FleetOptions(name=args.fleet, actors=args.actors)
    ray_harness = RayHarness(workers=args.workers, fleet=fleet, **options)
    local = Harness(workers=args.actors * args.workers, **options)
    try:
        warm_up(local, tasks[0])
        warm_up(ray_harness, tasks[0])
        timed = ray_harness.backend.timed
        walls: dict[str, list[float]] = {"local": [], "ray": []}
        mismatches: list[tuple] = []
        for repeat in range(args.repeats):
            order = [("local", local), ("ray", ray_harness)]
            results = {}
            for name, harness in order if repeat % 2 == 0 else order[::-1]:
                start = time.monotonic()
                results[name] = harness.evaluate_many(pairs)
                walls[name].append(time.monotonic() - start)
            for a, b in zip(results["local"], results["ray"], strict=True):
                if identity(a, timed) != identity(b, timed):
                    mismatches.append((identity(a, timed), identity(b, timed)))
        stats = ray_harness.stats
        runs_judged = stats.judged - ray_harness.workers  # the warm-up jobs are not measured
        overhead = stats.overhead_s[-runs_judged:]
        actor = stats.actor_s[-runs_judged:]
        local_s, ray_s = statistics.median(walls["local"]), statistics.median(walls["ray"])
        return {
            "command": " ".join(["python", *sys.argv]),
            "load_average_at_end": os.getloadavg(), "cpu_count": os.cpu_count(),
            "backend": ray_harness.backend.name, "device": ray_harness.device, "preset": ray_harness.preset,
            "actors": len(ray_harness.fleet.members), "workers_per_actor": args.workers,
            "candidates": len(pairs), "judged_per_run": runs_judged // args.repeats, "repeats": args.repeats,
            "identical_verdicts": not mismatches, "mismatches": mismatches[:10],
            "wall_s": walls, "median_wall_s": {"local": local_s, "ray": ray_s},
            "ray_overhead_per_evaluation_ms": 1000 * (ray_s - local_s) / len(pairs),
            "ray_overhead_share_of_wall": (ray_s - local_s) / ray_s,
            "round_trip_ms": {"median": 1000 * statistics.median(overhead),
                              "p90": 1000 * sorted(overhead)[int(0.9 * (len(overhead) - 1))]},
            "round_trip_share_of_job_latency": sum(overhead) / (sum(overhead) + sum(actor)),
        }
    finally:
        local.close()
        ray_harness.close()
        if not args.keep_fleet:
            stop_fleet(fleet)


def markdown(result: dict) -> str:
    walls = result["median_wall_s"]
    return "\n".join([
        f"## Ray harness vs in-process — {result['backend']} ({result['device']}), preset {result['preset']}, "
        f"{result['actors']} actor(s) × {result['workers_per_actor']} worker(s)", "",
        f"`{result['command']}` ({result['cpu_count']} CPUs, load average at the end "
        f"{result['load_average_at_end'][0]:.1f})", "",
        "| candidates | judged by workers | repeats | identical verdicts | local s (median) | ray s (median) | "
        "ray − local per evaluation, ms | share of ray wall | round trip per job, ms (median / p90) | "
        "round trip share of job latency |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|",
        f"| {result['candidates']} | {result['judged_per_run']} | {result['repeats']} | "
        f"{'yes' if result['identical_verdicts'] else 'NO'} | {walls['local']:.2f} | {walls['ray']:.2f} | "
        f"{result['ray_overhead_per_evaluation_ms']:.1f} | {100 * result['ray_overhead_share_of_wall']:.1f}% | "
        f"{result['round_trip_ms']['median']:.1f} / {result['round_trip_ms']['p90']:.1f} | "
        f"{100 * result['round_trip_share_of_job_latency']:.1f}% |",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="auto", choices=["auto", "cuda", "interpreter"])
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks")
    parser.add_argument("--preset", default=None)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--actors", type=int, default=1, help="judge actors of the fleet")
    parser.add_argument("--workers", type=int, default=4, help="worker processes per actor")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--memory-gib", type=float, default=None,
                        help="GiB per GPU the judge admits jobs against (default: its free memory); for sharing the GPU")
    parser.add_argument("--address", default=None, help="Ray cluster (default: a local one)")
    parser.add_argument("--fleet", default="atrl-benchmark")
    parser.add_argument("--keep-fleet", action="store_true", help="leave the fleet's actors running")
    parser.add_argument("--out", type=Path, default=None, help="also write the result as JSON here")
    args = parser.parse_args()
    result = run(args)
    print(markdown(result))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
