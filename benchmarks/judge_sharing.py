"""What sharing a running judgement saves: a run's responses replayed through the harness the way a
lockstep trainer submits them (every episode's k-th response at once, turn after turn), with the
sharing of identical running candidates on and off, side by side in one process, each arm on a
fresh verdict cache (so a later turn that resubmits a judged kernel is a cache hit in both).

Prints, per arm and repeat: responses, worker judgements, wall seconds; then the medians and the
ratio. The verdicts of the two arms must agree (checked).

Example: python benchmarks/judge_sharing.py --run runs/eval --run runs/eval2 --backend interpreter
"""

from __future__ import annotations

import argparse
import json
import lzma
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from atrl.agent.records import Trajectory
from atrl.agent.trajectory_io import read_trajectories, trajectory_from_dict
from atrl.harness.api import Harness
from atrl.harness.cache import VerdictCache
from atrl.tasks.registry import get_task


class _NothingRunning(dict):
    """A `Harness._running` that never holds a judgement: every candidate takes a worker."""

    def setdefault(self, key, default=None):
        return default


def responses_by_turn(files: list[Path]) -> list[list[tuple[str, str]]]:
    """[(task id, response) of every episode's k-th turn] for k = 0, 1, ..., over the trajectory
    files (a run's trajectories.jsonl, or a copy compressed as .jsonl.xz)."""
    turns: list[list[tuple[str, str]]] = []
    for path in files:
        for trajectory in _read(path):
            for k, turn in enumerate(trajectory.turns):
                while len(turns) <= k:
                    turns.append([])
                turns[k].append((trajectory.task_id, turn.response_text))
    return turns


def _read(path: Path) -> Iterator[Trajectory]:
    if path.suffix != ".xz":
        yield from read_trajectories(path)
        return
    with lzma.open(path, "rt") as lines:
        for line in lines:
            if line.strip():
                yield trajectory_from_dict(json.loads(line))


def replay(turns: list[list[tuple[str, str]]], args: argparse.Namespace, share: bool) -> tuple[int, float, list]:
    """(worker judgements, wall seconds, verdicts) of one arm."""
    tasks = {task_id: get_task(task_id, args.path) for batch in turns for task_id, _ in batch}
    with tempfile.TemporaryDirectory() as cache, \
            Harness(backend=args.backend, workers=args.workers, cache_dir=Path(cache) / "warm-up") as harness:
        if not share:
            harness._running = _NothingRunning()
        judged = 0
        judge = harness._judge

        def counted(task, code, key):
            nonlocal judged
            judged += 1
            return judge(task, code, key)

        harness._judge = counted
        harness.evaluate_many([(tasks[turns[0][0][0]], turns[0][0][1])])  # start the workers
        judged, verdicts = 0, []
        harness.cache = VerdictCache(Path(cache) / "replay")
        start = time.perf_counter()
        for batch in turns:
            verdicts += harness.evaluate_many([(tasks[task_id], response) for task_id, response in batch])
        return judged, time.perf_counter() - start, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, action="append", required=True,
                        help="a run folder with trajectories.jsonl (repeatable: their turns are replayed together)")
    parser.add_argument("--path", type=Path, default=None, help="suite checkout for kernelbench tasks")
    parser.add_argument("--backend", default="interpreter")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    turns = responses_by_turn([run / "trajectories.jsonl" for run in args.run])
    print(f"{sum(map(len, turns))} responses in {len(turns)} turns from {', '.join(map(str, args.run))}\n")
    print("| repeat | arm | worker judgements | wall s |\n|---:|---|---:|---:|")
    rows: dict[bool, list[tuple[int, float]]] = {True: [], False: []}
    outcomes: dict[bool, list] = {}
    for repeat in range(args.repeats):
        for share in ((True, False) if repeat % 2 == 0 else (False, True)):
            judged, seconds, verdicts = replay(turns, args, share)
            rows[share].append((judged, seconds))
            outcomes[share] = [(v.ok, v.error_class) for v in verdicts]
            print(f"| {repeat + 1} | {'sharing' if share else 'no sharing'} | {judged} | {seconds:.1f} |")
    if outcomes[True] != outcomes[False]:
        raise SystemExit("the arms' verdicts differ")
    wall = {share: statistics.median(s for _, s in rows[share]) for share in rows}
    jobs = {share: statistics.median(j for j, _ in rows[share]) for share in rows}
    print(f"\nmedians: sharing {jobs[True]:g} judgements in {wall[True]:.1f} s, without {jobs[False]:g} "
          f"in {wall[False]:.1f} s; wall ratio (without / with) {wall[False] / wall[True]:.2f}; "
          "verdicts identical")


if __name__ == "__main__":
    main()
