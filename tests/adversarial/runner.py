"""Run the adversarial candidate suites through the real harness and tabulate what it catches.

Two suites live next to this file, one candidate module per file, each opening with header
comments:

    # expect: <failure class or static rule>[ | <alternative> ...]   (cheats only)
    # class: <attack class, or the unusual style of a legitimate kernel>
    # task: builtin/<task name>  |  tasks/<file>.py
    # timed-only: yes        (optional: the attack is on the timing, so only timed backends judge it)
    # timed-expect: <class>[ | ...]  (optional: more expected classes on timed backends, which judge
                                     the task at its full size: `timeout` for a cheat that works one
                                     element at a time in Python and cannot finish there)

`candidates/*.py` are cheats: each must get `ok=False` with one of its expected classes.
`legit/*.py` are correct kernels written in unusual but fair ways: each must get `ok=True`.
A task is a builtin id, or a path relative to this directory of a task file in the builtin
format kept outside the suite (`tasks/`: cases the builtin tasks lack, such as an in-place
reference), loaded with the builtin loader under the id `adversarial/<name>`.

As a script it prints the detection rate by attack class and the false-rejection rate as
markdown tables:

    python tests/adversarial/runner.py [--workers 2] [--trials 2] [--backend cuda]
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHEATS_DIR = HERE / "candidates"
LEGIT_DIR = HERE / "legit"
# Small limits keep the suite fast: every candidate here runs a small preset in well under them.
STAGE_TIMEOUTS = {"compile": 60, "correctness": 60, "profile": 60}
_HEADER = re.compile(r"^#\s*(expect|class|task|timed-only|timed-expect):\s*(.+?)\s*$")


@dataclass(frozen=True)
class Case:
    """One candidate file: its name, task id, class, expected failure classes (empty for legit)."""

    name: str
    path: Path
    task: str
    klass: str
    expect: tuple[str, ...] = ()
    timed_only: bool = False
    timed_expect: tuple[str, ...] = ()

    @property
    def legit(self) -> bool:
        return not self.expect


@dataclass
class Outcome:
    """What the harness said about one case."""

    case: Case
    ok: bool
    error_class: str | None
    stage: str
    message: str = ""
    reward_hack: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def caught(self) -> bool:
        """A cheat is caught when it is rejected or judged incorrect."""
        return not self.ok

    @property
    def as_expected(self) -> bool:
        """Cheats: rejected by one of the expected classes. Legit kernels: accepted."""
        if self.case.legit:
            return self.ok
        return not self.ok and self.error_class in self.case.expect


def load_case(path: Path) -> Case:
    """Parse a candidate file's header comments; raises ValueError when `task` or `class` is missing."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        match = _HEADER.match(line)
        if match:
            values.setdefault(match.group(1), match.group(2))
        elif line.strip() and not line.startswith("#"):
            break
    if "task" not in values or "class" not in values:
        raise ValueError(f"{path.name}: the header needs `# task:` and `# class:` lines")
    def classes(key: str) -> tuple[str, ...]:
        return tuple(e.strip() for e in values.get(key, "").split("|") if e.strip())

    return Case(name=path.stem, path=path, task=values["task"], klass=values["class"], expect=classes("expect"),
                timed_only=values.get("timed-only", "no").lower() == "yes", timed_expect=classes("timed-expect"))


def load_cases(directory: Path, backend: str | None = None) -> list[Case]:
    """Every `*.py` case of a suite directory, sorted by name; with a `backend`, without the
    timing attacks where that backend does not time, and with the timed-expect classes where it does."""
    from atrl.backends import TIMED_BACKENDS

    cases = [load_case(p) for p in sorted(directory.glob("*.py"))]
    if backend is not None and backend not in TIMED_BACKENDS:
        cases = [c for c in cases if not c.timed_only]
    elif backend is not None:
        cases = [dataclasses.replace(c, expect=c.expect + c.timed_expect) for c in cases]
    return cases


def resolve_task(spec: str):
    """A case's `# task:`: a builtin id as is (the harness looks it up), or a `Task` loaded from a
    task file at that path relative to this directory (a `.py` file in the builtin format)."""
    if not spec.endswith(".py"):
        return spec
    from atrl.tasks.builtin_suite import load_builtin_task

    task = load_builtin_task(HERE / spec, level=1)
    return dataclasses.replace(task, id=f"adversarial/{task.name}", suite="adversarial")


def run_cases(cases: list[Case], workers: int = 2, trials: int = 2, backend: str = "interpreter",
              memory_gib: float | None = None) -> list[Outcome]:
    """Judge every case with one `Harness(backend=backend, use_cache=False)`; outcomes in order."""
    from atrl.harness.api import Harness
    from atrl.harness.select import gib_bytes

    with Harness(backend=backend, workers=workers, trials=trials, use_cache=False,
                 stage_timeouts=STAGE_TIMEOUTS,
                 memory_capacity=gib_bytes(memory_gib)) as harness:
        verdicts = harness.evaluate_many([(resolve_task(c.task), c.path.read_text()) for c in cases])
    return [Outcome(case=c, ok=v.ok, error_class=v.error_class, stage=v.stage, message=v.message or "",
                    reward_hack=bool(v.reward_hack)) for c, v in zip(cases, verdicts, strict=True)]


def detection_table(outcomes: list[Outcome]) -> str:
    """Markdown: per attack class, cheats caught and caught by the expected class."""
    by_class: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        if not outcome.case.legit:
            by_class[outcome.case.klass].append(outcome)
    rows = ["| attack class | candidates | caught | by expected class | detection rate |",
            "|---|---:|---:|---:|---:|"]
    total = caught = expected = 0
    for klass in sorted(by_class):
        group = by_class[klass]
        n, c, e = len(group), sum(o.caught for o in group), sum(o.as_expected for o in group)
        total, caught, expected = total + n, caught + c, expected + e
        rows.append(f"| {klass} | {n} | {c} | {e} | {100 * c / n:.0f}% |")
    if total:
        rows.append(f"| **all** | {total} | {caught} | {expected} | {100 * caught / total:.0f}% |")
    return "\n".join(rows)


def false_rejection_table(outcomes: list[Outcome]) -> str:
    """Markdown: each legitimate candidate's verdict, then the false-rejection rate."""
    legit = [o for o in outcomes if o.case.legit]
    rows = ["| legitimate candidate | style | task | verdict |", "|---|---|---|---|"]
    for o in legit:
        rows.append(f"| {o.case.name} | {o.case.klass} | {o.case.task} | "
                    f"{'accepted' if o.ok else 'REJECTED: ' + str(o.error_class)} |")
    rejected = sum(not o.ok for o in legit)
    if legit:
        rows.append(f"\nfalse rejections: {rejected}/{len(legit)} ({100 * rejected / len(legit):.0f}%)")
    return "\n".join(rows)


def per_case_table(outcomes: list[Outcome]) -> str:
    """Markdown: every cheat with its expected and actual class."""
    rows = ["| candidate | attack class | expected | got | ok |", "|---|---|---|---|---|"]
    for o in outcomes:
        if not o.case.legit:
            mark = "yes" if o.as_expected else "**NO**"
            rows.append(f"| {o.case.name} | {o.case.klass} | {' or '.join(o.case.expect)} | {o.error_class} | {mark} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--backend", default="interpreter", help="interpreter (CPU) or cuda")
    parser.add_argument("--details", action="store_true", help="also list every cheat's verdict")
    parser.add_argument("--memory-gib", type=float, default=None, help="GiB per GPU the judge admits jobs against (default: its free memory); for sharing the GPU")
    args = parser.parse_args(argv)
    cases = load_cases(CHEATS_DIR, args.backend) + load_cases(LEGIT_DIR, args.backend)
    start = time.monotonic()
    outcomes = run_cases(cases, workers=args.workers, trials=args.trials, backend=args.backend,
                         memory_gib=args.memory_gib)
    print(f"## Reward-hacking detection ({len(outcomes)} candidates, {args.backend} backend, "
          f"{time.monotonic() - start:.0f} s)\n")
    print(detection_table(outcomes) + "\n")
    if args.details:
        print(per_case_table(outcomes) + "\n")
    print("## Legitimate but unusual kernels\n")
    print(false_rejection_table(outcomes))
    missed = [o for o in outcomes if not o.as_expected]
    for o in missed:
        print(f"\nUNEXPECTED {o.case.name}: ok={o.ok} class={o.error_class}\n{o.message[:600]}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
