"""Judge the KernelBench candidate set with the harness: false rejections and the class of each cheat.

Every candidate of `tests/data/kernelbench_candidates/manifest.yaml` (see kernelbench_candidates.py)
is judged for its KernelBench task, read from a checkout, by one `Harness` with the cache off.
Sizes: the backend's default, i.e. the tasks as written (default sizes) on `cuda` and the
KernelBench `small` preset on the interpreter (every size constant capped at 256, inputs shrunk
to about a million elements and, on levels 1-2, the reference forward to 2^26 FLOPs:
`atrl.tasks.kernelbench.preset_for_source`); `--preset full` or
`--preset small` overrides it. Prints markdown (and writes it with `--markdown`); `--json` writes
one record per candidate.

    python benchmarks/kernelbench_set.py --kernelbench PATH [--backend interpreter|cuda]
        [--workers 2] [--trials 2] [--only NAME,...] [--kind correct,cheat,wrong]

Exit status 1 when any candidate did not get its expected verdict.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernelbench_candidates import (  # noqa: E402
    KERNELBENCH_ENV,
    KINDS,
    SET_DIR,
    Candidate,
    load_candidates,
    load_task,
    with_wrong_variants,
)

from atrl.backends import TIMED_BACKENDS  # noqa: E402
from atrl.errors import UsageError  # noqa: E402

# Default sizes on a GPU need room: a 6 GiB input is judged with its float64 and trial copies.
STAGE_TIMEOUTS = {"compile": 300, "correctness": 600, "profile": 600}
# Timed and warm-up calls per side when a correct candidate is timed (the harness defaults).
TIMED_CALLS = 100
WARMUP_CALLS = 10


@dataclass
class Outcome:
    """The harness's verdict on one candidate, beside what the manifest expects."""

    name: str
    task: str
    kind: str
    style: str
    expect: tuple[str, ...]
    ok: bool
    error_class: str | None
    stage: str
    seconds: float
    message: str = ""
    stage_seconds: dict[str, float] = field(default_factory=dict)
    correctness_seconds: dict[str, float] = field(default_factory=dict)  # the stage's parts
    candidate_ms: float | None = None  # the timed call's median, each side (None: not timed)
    reference_ms: float | None = None

    @property
    def as_expected(self) -> bool:
        return self.ok if not self.expect else (not self.ok and self.error_class in self.expect)

    @property
    def expected_text(self) -> str:
        return "accepted" if not self.expect else " or ".join(self.expect)

    @property
    def got_text(self) -> str:
        return "accepted" if self.ok else str(self.error_class)


def judge(candidates: list[Candidate], kernelbench: Path, backend: str, workers: int, trials: int,
          preset: str | None, policy: str | None = "partial", wrong_variants: int = 0,
          memory_gib: float | None = None) -> tuple[list[Outcome], str | None]:
    """Judge every candidate, then `wrong_variants` builtin-style wrong variants of the first correct
    ones, with one harness (cache off) under `policy` (None: each task's own): outcomes in input
    order, and the size preset it ran (None: the tasks as written)."""
    from atrl.harness.api import Harness
    from atrl.harness.select import gib_bytes

    pairs = with_wrong_variants(candidates, kernelbench, wrong_variants)
    with Harness(backend=backend, workers=workers, trials=trials, use_cache=False, preset=preset,
                 stage_timeouts=STAGE_TIMEOUTS, compute_policy=policy, timed_calls=TIMED_CALLS,
                 warmup_calls=WARMUP_CALLS, memory_capacity=gib_bytes(memory_gib)) as harness:
        futures = [harness.submit(load_task(c, kernelbench), source) for c, source in pairs]
        verdicts = []
        for i, ((candidate, _), future) in enumerate(zip(pairs, futures, strict=True), start=1):
            verdicts.append(future.result())
            got = "accepted" if verdicts[-1].ok else verdicts[-1].error_class
            # in input order, so a long run at default sizes shows how far it got
            print(f"[{i}/{len(pairs)}] {candidate.name}: {got}", file=sys.stderr, flush=True)
        used = harness.preset
    outcomes = [Outcome(name=c.name, task=c.task, kind=c.kind, style=c.style, expect=c.expect, ok=v.ok,
                    error_class=v.error_class, stage=v.stage, seconds=round(v.judge_seconds, 2),
                    message=(v.message or "")[:400], stage_seconds=dict(v.stage_seconds),
                    correctness_seconds=dict(v.correctness.seconds) if v.correctness else {},
                    candidate_ms=v.timing.candidate_ms if v.timing else None,
                    reference_ms=v.timing.reference_ms if v.timing else None)
                for (c, _), v in zip(pairs, verdicts, strict=True)]
    return outcomes, used


def summary_lines(outcomes: list[Outcome]) -> list[str]:
    """One line per kind: how many got their expected verdict; false rejections of correct ones;
    for cheats, how many pass (are accepted) and the classes that caught them."""
    lines = []
    for kind in KINDS:
        group = [o for o in outcomes if o.kind == kind]
        if not group:
            continue
        expected = sum(o.as_expected for o in group)
        line = f"- {kind}: {expected}/{len(group)} as expected"
        if kind == "correct":
            rejected = [o for o in group if not o.ok]
            line += f"; false rejections {len(rejected)}/{len(group)}"
            if rejected:
                line += " (" + ", ".join(f"{o.name}: {o.error_class}" for o in rejected) + ")"
        else:
            passed = [o.name for o in group if o.ok]
            classes = Counter(o.error_class for o in group if not o.ok)
            line += f"; accepted (not caught) {len(passed)}/{len(group)}"
            if passed:
                line += " (" + ", ".join(passed) + ")"
            if classes:
                line += "; caught by " + ", ".join(f"{k} ×{n}" for k, n in sorted(classes.items()))
        lines.append(line)
    return lines


def outcome_table(outcomes: list[Outcome]) -> str:
    rows = ["| candidate | task | kind | style | expected | got | as expected | worker s |",
            "|---|---|---|---|---|---|---|---:|"]
    for o in outcomes:
        mark = "yes" if o.as_expected else "**NO**"
        rows.append(f"| {o.name} | {o.task} | {o.kind} | {o.style} | {o.expected_text} | {o.got_text} | {mark} "
                    f"| {o.seconds:.1f} |")
    return "\n".join(rows)


def throughput_lines(outcomes: list[Outcome], wall: float, workers: int,
                     calls_per_side: int = TIMED_CALLS + WARMUP_CALLS) -> list[str]:
    """Evaluations per minute over the run, the time split by stage (summed over candidates, as a
    share, and the median per candidate that reached the stage), and wall time against the GPU
    time the timing itself needs: `calls_per_side` calls of the candidate and of the reference per
    timed candidate, at their measured medians."""
    if not outcomes or wall <= 0:
        return []
    stages: dict[str, list[float]] = {}
    waited = 0.0  # queued for the GPU: inside the stages' own times, so reported apart
    for o in outcomes:
        for stage, seconds in o.stage_seconds.items():
            if stage == "device_wait":
                waited += seconds
            else:
                stages.setdefault(stage, []).append(seconds)
    total = sum(sum(v) for v in stages.values()) or 1.0
    split = ", ".join(f"{stage} {sum(v):.0f} s ({sum(v) / total:.0%}; median {statistics.median(v):.2f} s)"
                      for stage, v in sorted(stages.items(), key=lambda kv: -sum(kv[1])))
    parts: Counter[str] = Counter()
    for o in outcomes:
        parts.update(o.correctness_seconds)
    part_total = sum(parts.values()) or 1.0
    timed = [o for o in outcomes if o.candidate_ms is not None and o.reference_ms is not None]
    timing_gpu = sum(calls_per_side * (o.candidate_ms + o.reference_ms) for o in timed) / 1000
    lines = ["### Throughput", "",
             f"- {len(outcomes)} evaluations in {wall:.0f} s with {workers} workers: "
             f"{len(outcomes) / wall * 60:.1f} evaluations per minute",
             f"- worker time by stage: {split}"
             + (f" (of which {waited:.0f} s queued for the GPU while other candidates were timed)" if waited else "")]
    if parts:
        lines.append("- correctness by part: " + ", ".join(f"{name} {seconds:.0f} s ({seconds / part_total:.0%})"
                                                          for name, seconds in parts.most_common()))
    if timed:
        lines.append(f"- timing: {len(timed)} candidates timed, {calls_per_side} calls per side at their medians "
                     f"need {timing_gpu:.1f} s of GPU time; wall time / timing GPU time = {wall / timing_gpu:.1f}"
                     if timing_gpu > 0 else f"- timing: {len(timed)} candidates timed")
    return [*lines, ""]


def report(outcomes: list[Outcome], backend: str, preset: str | None, wall: float, command: str,
           policy: str = "partial", workers: int = 1) -> str:
    size = f"preset {preset}" if preset else "default sizes (as written)"
    return "\n".join([
        f"## KernelBench candidate set: {len(outcomes)} candidates, {backend} backend, {size}, {policy} policy",
        "", f"Command: `{command}`", f"Wall time: {wall:.0f} s", "", *summary_lines(outcomes), "",
        *throughput_lines(outcomes, wall, workers), outcome_table(outcomes), ""])


def _select(candidates: list[Candidate], only: str | None, kinds: str | None,
            level: int | None = None) -> list[Candidate]:
    if only:
        names = [n.strip() for n in only.split(",") if n.strip()]
        unknown = sorted(set(names) - {c.name for c in candidates})
        if unknown:
            raise UsageError(f"--only names unknown candidates: {', '.join(unknown)}",
                             "use file stems listed in manifest.yaml")
        candidates = [c for c in candidates if c.name in names]
    if level is not None:
        candidates = [c for c in candidates if c.task.startswith(f"level{level}/")]
    if kinds:
        wanted = {k.strip() for k in kinds.split(",")}
        bad = sorted(wanted - set(KINDS))
        if bad:
            raise UsageError(f"--kind {', '.join(bad)} is unknown", f"use {', '.join(KINDS)}")
        candidates = [c for c in candidates if c.kind in wanted]
    return candidates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", default=os.environ.get(KERNELBENCH_ENV),
                        help=f"KernelBench checkout (default ${KERNELBENCH_ENV})")
    parser.add_argument("--set", type=Path, default=SET_DIR, help="candidate folder holding manifest.yaml")
    parser.add_argument("--backend", default="interpreter", choices=("interpreter", "cuda"),
                        help="interpreter (CPU, TRITON_INTERPRET) or cuda")
    parser.add_argument("--preset", default=None, choices=("small", "full"),
                        help="task sizes (default: the backend's: small on the interpreter, full on cuda)")
    parser.add_argument("--policy", default="partial", choices=("partial", "strict", "task"),
                        help="compute policy (default partial, KernelBench's rules; task: each task's own)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--only", help="comma-separated candidate names")
    parser.add_argument("--kind", help="comma-separated kinds to judge (correct, cheat, wrong)")
    parser.add_argument("--level", type=int, help="only candidates for tasks of this KernelBench level")
    parser.add_argument("--wrong-variants", type=int, default=0,
                        help="also judge builtin-style wrong variants (tl.store writes value + 1) of the first N correct ones")
    parser.add_argument("--memory-gib", type=float, default=None, help="GiB per GPU the judge admits jobs against (default: its free memory); for sharing the GPU")
    parser.add_argument("--markdown", type=Path, help="also write the report here")
    parser.add_argument("--json", type=Path, help="write one record per candidate here")
    args = parser.parse_args(argv)
    try:
        if not args.kernelbench:
            raise UsageError("no KernelBench checkout given", f"pass --kernelbench PATH or set ${KERNELBENCH_ENV}")
        kernelbench = Path(args.kernelbench)
        candidates = _select(load_candidates(args.set), args.only, args.kind, args.level)
        if args.backend not in TIMED_BACKENDS:
            untimed = [c.name for c in candidates if c.timed_only]
            if untimed:
                print(f"left out: {len(untimed)} timing attacks ({', '.join(untimed)}), which only a timed backend "
                      "can catch", file=sys.stderr)
            candidates = [c for c in candidates if not c.timed_only]
        for candidate in candidates:  # the checkout and every task file are checked before anything runs
            load_task(candidate, kernelbench)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    start = time.monotonic()
    policy = None if args.policy == "task" else args.policy
    outcomes, preset = judge(candidates, kernelbench, args.backend, args.workers, args.trials, args.preset, policy,
                             args.wrong_variants, args.memory_gib)
    command = "python benchmarks/kernelbench_set.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(outcomes, args.backend, preset, time.monotonic() - start, command, args.policy, args.workers)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps([dataclasses.asdict(o) | {"as_expected": o.as_expected}
                                         for o in outcomes], indent=1))
    for o in outcomes:
        if not o.as_expected:
            print(f"\nUNEXPECTED {o.name}: got {o.got_text}\n{o.message}", file=sys.stderr)
    return 0 if all(o.as_expected for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
