"""The KernelBench candidate set: hand-written answers to KernelBench tasks, kept as test data.

The set lives in `tests/data/kernelbench_candidates/`: one candidate module per file and a
`manifest.yaml` listing, for each file, the KernelBench task it answers (`level1/19_ReLU`), its
kind (`correct`, `cheat`, `wrong`), its style, and the verdict expected from the harness:
`ok` for a correct kernel, else the failure classes any of which counts as the expected
rejection. `wrong` entries may also name a `principle` (`precision-downgrade`, `wide-inputs`,
`torch-compile`, `input-mutation`): a rule by which the harness rejects what KernelBench's own
evaluator accepts.

No KernelBench code is stored here. A candidate that answers with the whole file (as LLMs do)
holds the marker line `# @echo-reference`; `candidate_source` replaces it with the task's
reference source read from a KernelBench checkout at load time.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from atrl.errors import UsageError
from atrl.tasks.kernelbench import load_kernelbench_task
from atrl.tasks.mutations import plus_one_variant
from atrl.tasks.task import Task

SET_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "kernelbench_candidates"
MARKER = "# @echo-reference"
KINDS = ("correct", "cheat", "wrong")
PRINCIPLES = {
    # principle -> the failure classes by which the harness applies it
    "precision-downgrade": ("correctness:precision",),
    "wide-inputs": ("correctness:wide-inputs",),
    "torch-compile": ("static:cuda-stream-or-graph",),
    "input-mutation": ("correctness:input-mutation",),
}
KERNELBENCH_ENV = "ATRL_KERNELBENCH"
PLUS_ONE_EXPECT = ("correctness:mismatch",)
REQUIRED_KEYS = ("file", "task", "kind", "style", "expect")
OPTIONAL_KEYS = ("principle", "note", "timed_only")


@dataclass(frozen=True)
class Candidate:
    """One manifest entry. `expect` is empty for a candidate that must be accepted."""

    name: str
    path: Path
    task: str  # "level<L>/<file stem>"
    kind: str
    style: str
    expect: tuple[str, ...] = ()
    principle: str | None = None
    note: str = ""
    timed_only: bool = False  # an attack on the timing: an untimed backend (the interpreter) accepts it

    @property
    def should_pass(self) -> bool:
        return not self.expect

    @property
    def level(self) -> int:
        return int(self.task.split("/", 1)[0].removeprefix("level"))


def _entry(raw: object, set_dir: Path, index: int) -> Candidate:
    where = f"{set_dir / 'manifest.yaml'} entry {index + 1}"
    if not isinstance(raw, dict):
        raise UsageError(f"{where} is not a mapping", "write `- file: ...` with task, kind, style, expect")
    missing = [k for k in REQUIRED_KEYS if k not in raw]
    if missing:
        raise UsageError(f"{where} lacks {', '.join(missing)}", "every entry names file, task, kind, style, expect")
    unknown = sorted(set(raw) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:  # e.g. an unquoted comma inside a flow mapping's value split it into a new key
        raise UsageError(f"{where} has unknown keys {', '.join(map(str, unknown))}",
                         f"use only {', '.join(REQUIRED_KEYS + OPTIONAL_KEYS)}; quote values that hold commas")
    kind, expect = raw["kind"], raw["expect"]
    if kind not in KINDS:
        raise UsageError(f"{where}: kind {kind!r} is unknown", f"use one of {', '.join(KINDS)}")
    expected = () if expect == "ok" else tuple([expect] if isinstance(expect, str) else expect)
    if (kind == "correct") != (not expected):
        raise UsageError(f"{where}: kind {kind} with expect {expect!r}",
                         "a correct candidate expects `ok`; a cheat or wrong one lists failure classes")
    principle = raw.get("principle")
    if principle is not None and principle not in PRINCIPLES:
        raise UsageError(f"{where}: principle {principle!r} is unknown", f"use one of {', '.join(PRINCIPLES)}")
    timed_only = raw.get("timed_only", False)
    if not isinstance(timed_only, bool) or (timed_only and kind != "cheat"):
        raise UsageError(f"{where}: timed_only {timed_only!r}", "timed_only is true or false, and true only for a cheat")
    path = set_dir / raw["file"]
    if not path.is_file():
        raise UsageError(f"{where}: {path} does not exist", "add the file or remove the entry")
    return Candidate(name=path.stem, path=path, task=str(raw["task"]), kind=kind, style=str(raw["style"]),
                     expect=expected, principle=principle, note=str(raw.get("note", "")), timed_only=timed_only)


def load_candidates(set_dir: Path = SET_DIR) -> list[Candidate]:
    """The manifest's entries in file order; `UsageError` naming the entry when one is malformed."""
    manifest = set_dir / "manifest.yaml"
    if not manifest.is_file():
        raise UsageError(f"{manifest} does not exist", "point --set at a folder holding manifest.yaml")
    try:
        raw = yaml.safe_load(manifest.read_text()) or []
    except yaml.YAMLError as exc:
        raise UsageError(f"{manifest} is not valid YAML ({' '.join(str(exc).split())})",
                         "fix the entry it points at; quote values holding [ ] { } or commas") from None
    if not isinstance(raw, list):
        raise UsageError(f"{manifest} is not a list of entries", "write one `- file: ...` mapping per candidate")
    candidates = [_entry(item, set_dir, i) for i, item in enumerate(raw)]
    names = [c.name for c in candidates]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise UsageError(f"{manifest} lists {', '.join(duplicated)} more than once", "list each file once")
    return candidates


def levels_dir(root: Path) -> Path:
    """The folder holding `level1/`, ...: the checkout's `KernelBench/` or `root` itself."""
    root = Path(root).expanduser()
    for base in (root / "KernelBench", root):
        if (base / "level1").is_dir():
            return base
    raise UsageError(f"{root} holds no KernelBench levels (no level1/ folder)",
                     "pass the root of a KernelBench checkout (the folder holding KernelBench/level1)")


def task_path(candidate: Candidate, root: Path) -> Path:
    path = levels_dir(root) / f"{candidate.task}.py"
    if not path.is_file():
        raise UsageError(f"{candidate.name}: task file {path} does not exist",
                         "use a KernelBench checkout that has this task, or fix the manifest's task")
    return path


def load_task(candidate: Candidate, root: Path) -> Task:
    """The candidate's KernelBench task, loaded by ATRL's own KernelBench loader."""
    return load_kernelbench_task(task_path(candidate, root), candidate.level)


def reference_source(candidate: Candidate, root: Path) -> str:
    return task_path(candidate, root).read_text()


def candidate_source(candidate: Candidate, root: Path) -> str:
    """The candidate's code with each `# @echo-reference` line replaced by the task's reference
    source as written (the whole-file answer an LLM gives)."""
    text = candidate.path.read_text()
    if MARKER not in text:
        return text
    reference = reference_source(candidate, root).rstrip("\n")
    lines = [reference if line.strip() == MARKER else line for line in text.splitlines()]
    source = "\n".join(lines) + "\n"
    ast.parse(source)  # a marker placed inside a block would break the file: fail here, not in the judge
    return source


def with_wrong_variants(candidates: list[Candidate], kernelbench: Path, count: int) -> list[tuple[Candidate, str]]:
    """(candidate, source) for each candidate, then builtin-style wrong variants (`value + 1` in
    every `tl.store`; benchmarks/harness_throughput.py changes only the last one, which a kernel may
    branch around) of the first `count` correct ones, named `<name>+1`."""
    pairs = [(c, candidate_source(c, kernelbench)) for c in candidates]
    variants: list[tuple[Candidate, str]] = []
    for candidate, source in pairs:
        if len(variants) >= count:
            break
        wrong = plus_one_variant(source) if candidate.should_pass else None
        if wrong is not None:
            variants.append((replace(candidate, name=f"{candidate.name}+1", kind="wrong",
                                     style="builtin-style: tl.store writes value + 1",
                                     expect=PLUS_ONE_EXPECT, principle=None), wrong))
    return pairs + variants
