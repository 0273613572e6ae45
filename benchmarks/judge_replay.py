"""A run's responses judged again the way a lockstep trainer submits them (every episode's k-th
turn at once, turn after turn) by one harness alone: wall seconds per turn against the workers'
stage seconds, and the verdict classes. What a training step's judging costs without the runs,
evaluations and locks around it (compare `time_evaluation_s` in a run's metrics).

    python benchmarks/judge_replay.py --trajectories RUN/trajectories.jsonl[.xz] --backend cuda \
        --workers 6 --timed-calls 20
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge_sharing import responses_by_turn  # noqa: E402

from atrl.harness.api import Harness  # noqa: E402
from atrl.tasks.registry import get_task  # noqa: E402


def replay(turns: list[list[tuple[str, str]]], backend: str, workers: int, timed_calls: int) -> list[dict]:
    """One row per turn: responses, wall seconds, summed stage seconds, verdict classes."""
    tasks = {task_id: get_task(task_id) for batch in turns for task_id, _ in batch}
    rows = []
    with tempfile.TemporaryDirectory() as cache, \
            Harness(backend=backend, workers=workers, timed_calls=timed_calls, cache_dir=Path(cache)) as harness:
        for k, batch in enumerate(turns):
            start = time.perf_counter()
            verdicts = harness.evaluate_many([(tasks[task_id], response) for task_id, response in batch])
            wall = time.perf_counter() - start
            stages: collections.Counter[str] = collections.Counter()
            for verdict in verdicts:
                stages.update(verdict.stage_seconds)
            classes = collections.Counter(v.error_class or "ok" for v in verdicts)
            rows.append({"turn": k + 1, "responses": len(batch), "wall_s": wall,
                         "stage_s": {s: round(x, 1) for s, x in stages.items()},
                         "classes": dict(classes.most_common())})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=Path, required=True, help="a trajectories.jsonl (or .jsonl.xz)")
    parser.add_argument("--backend", default="auto", help="auto | cuda | interpreter")
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--timed-calls", type=int, default=100)
    args = parser.parse_args()
    turns = responses_by_turn([args.trajectories])
    print(f"{sum(map(len, turns))} responses in {len(turns)} turns from {args.trajectories}; "
          f"{args.workers} workers, {args.timed_calls} timed calls a side\n")
    print("| turn | responses | wall s | worker stage seconds | verdicts |\n|---:|---:|---:|---|---|")
    rows = replay(turns, args.backend, args.workers, args.timed_calls)
    for row in rows:
        stages = ", ".join(f"{s} {x:g}" for s, x in row["stage_s"].items())
        classes = ", ".join(f"{c} {n}" for c, n in row["classes"].items())
        print(f"| {row['turn']} | {row['responses']} | {row['wall_s']:.1f} | {stages} | {classes} |")
    total = sum(r["responses"] for r in rows)
    wall = sum(r["wall_s"] for r in rows)
    print(f"\n{total} judgements in {wall:.1f} s: {total / wall:.2f} a second")


if __name__ == "__main__":
    main()
