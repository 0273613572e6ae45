"""A fixed train / held-out split of a suite's tasks, read from a YAML file and validated.

File format (see `configs/split-builtin.yaml`):

    suite: builtin
    train: [builtin/relu, ...]        # tasks the policy may learn from (SFT data, RL, kb examples)
    heldout: [builtin/sigmoid, ...]   # tasks only evaluated
    excluded:                         # optional: tasks in neither part, each with its reason
      builtin/matmul_large_k: same operator as builtin/matmul at another size

Rule enforced by `validate_split`: a held-out task is another *operator* than every training
task. A task's operators are its tags minus the family tags (`FAMILY_TAGS`: elementwise,
reduction, fusion, ...), or its name when no tag is left. A held-out task is rejected when its
operator set is contained in a training task's operator set: the same operator at another size
or dtype (equal sets), or a computation a training task already performs whole (held-out
`clamp` vs training `gelu_scale_clamp`). A held-out fusion of operators seen separately in
training is allowed: it is a new operator. Sameness the tags cannot show (e.g. `index_select`
along dim 0 is an embedding lookup) is the split author's job; `excluded` records it.

Configs name a split with `split: FILE` and `split_part: train|heldout`; `tasks_for(config
values)` returns the tasks of that part. Running this module prints a part's ids, comma-separated:
`python -m atrl.rl.split configs/split-builtin.yaml heldout`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml

from atrl.errors import UsageError
from atrl.tasks.task import Task

SplitPart = Literal["train", "heldout"]
PARTS: tuple[str, ...] = ("train", "heldout")

# Tags that name a family of operators, not an operator (builtin suite vocabulary).
FAMILY_TAGS = frozenset(
    {
        "elementwise",
        "activation",
        "reduction",
        "normalization",
        "matmul",
        "loss",
        "cumulative",
        "gather",
        "layout",
        "fusion",
        "conv",
        "pooling",
        "attention",
        "block",
    }
)


@dataclass
class Split:
    """Task ids of each part (file order) and the excluded ids with their reasons."""

    suite: str
    train: list[str]
    heldout: list[str]
    excluded: dict[str, str] = field(default_factory=dict)
    path: str | None = None

    def ids(self, part: str) -> list[str]:
        """The ids of `part` ("train" | "heldout"); UsageError for another name."""
        if part not in PARTS:
            raise UsageError(f"unknown split part {part!r}", "use split_part: train or split_part: heldout")
        return list(self.train if part == "train" else self.heldout)


def operators(task: Task) -> frozenset[str]:
    """The operator tags of a task: its tags minus `FAMILY_TAGS`, else its name."""
    ops = frozenset(t for t in task.tags if t not in FAMILY_TAGS)
    return ops or frozenset({task.name})


def _id_list(data: dict, key: str, where: str) -> list[str]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where}: `{key}` must be a list of task ids", f"write {key}: [suite/name, ...]")
    return value


def parse_split(data: object, where: str = "split") -> Split:
    """A `Split` from the YAML mapping (ids with a bare name get the suite prefix). Checks the
    shape and duplicates only; `validate_split` checks it against the tasks."""
    if not isinstance(data, dict):
        raise UsageError(f"{where}: a split file is a YAML mapping", "write suite:, train: and heldout: keys")
    unknown = set(data) - {"suite", "train", "heldout", "excluded"}
    if unknown:
        raise UsageError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))}",
            "use only suite, train, heldout, excluded",
        )
    suite = str(data.get("suite") or "builtin")
    excluded = data.get("excluded") or {}
    if not isinstance(excluded, dict):
        raise UsageError(f"{where}: `excluded` must map task ids to reasons", "write excluded: {id: reason}")

    def full(task_id: str) -> str:
        return task_id if "/" in task_id else f"{suite}/{task_id}"

    split = Split(
        suite=suite,
        train=[full(t) for t in _id_list(data, "train", where)],
        heldout=[full(t) for t in _id_list(data, "heldout", where)],
        excluded={full(str(k)): str(v) for k, v in excluded.items()},
    )
    seen: dict[str, str] = {}
    for part, ids in (("train", split.train), ("heldout", split.heldout), ("excluded", list(split.excluded))):
        for task_id in ids:
            if task_id in seen:
                where_else = (
                    "twice in " + part if seen[task_id] == part else f"in both {seen[task_id]} and {part}"
                )
                raise UsageError(
                    f"{where}: task {task_id} is listed {where_else}", "list every task in one part only"
                )
            seen[task_id] = part
    if not split.train or not split.heldout:
        raise UsageError(
            f"{where}: both train and heldout need at least one task", "list task ids in each part"
        )
    return split


def validate_split(split: Split, tasks: Iterable[Task], where: str = "split") -> None:
    """Raise UsageError naming the first problem: an id that is not a task of the suite, or a
    held-out task whose operators a training task already computes (see the module doc)."""
    by_id = {t.id: t for t in tasks}
    for task_id in [*split.train, *split.heldout, *split.excluded]:
        if task_id not in by_id:
            import difflib

            close = difflib.get_close_matches(task_id, list(by_id), n=1)
            hint = f"did you mean {close[0]}?" if close else "run `atrl tasks list` to see the ids"
            raise UsageError(f"{where}: unknown task {task_id}", hint)
    train_ops = [(task_id, operators(by_id[task_id])) for task_id in split.train]
    for task_id in split.heldout:
        ops = operators(by_id[task_id])
        for train_id, seen in train_ops:
            if ops <= seen:
                raise UsageError(
                    f"{where}: held-out task {task_id} has operator(s) {', '.join(sorted(ops))} that training task "
                    f"{train_id} already computes",
                    "hold out another operator, or move the training task to heldout or excluded",
                )


def read_split(path: str | Path) -> Split:
    """Read a split file and check its shape (not yet against the tasks)."""
    path = Path(path)
    if not path.exists():
        raise UsageError(
            f"split file {path} does not exist", "pass split: FILE pointing at a split YAML file"
        )
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not valid YAML ({exc})", "fix the split file") from None
    split = parse_split(data, str(path))
    split.path = str(path)
    return split


def _suite_tasks(split: Split, tasks: Sequence[Task] | None) -> Sequence[Task]:
    if tasks is not None:
        return tasks
    from atrl.tasks.registry import load_suite

    return load_suite(split.suite).tasks


def load_split(path: str | Path, tasks: Sequence[Task] | None = None) -> Split:
    """Read and validate a split file against `tasks` (default: its suite, loaded here)."""
    split = read_split(path)
    validate_split(split, _suite_tasks(split, tasks), str(path))
    return split


def split_tasks(split: Split, part: str, tasks: Sequence[Task]) -> list[Task]:
    """The tasks of one part, in the split file's order."""
    by_id = {t.id: t for t in tasks}
    return [by_id[task_id] for task_id in split.ids(part)]


def tasks_for(split_path: str | Path, part: str, tasks: Sequence[Task] | None = None) -> list[Task]:
    """Load, validate and select: the tasks of `part` of the split at `split_path` (`tasks`:
    the suite's tasks, loaded here when not given)."""
    split = read_split(split_path)
    tasks = _suite_tasks(split, tasks)
    validate_split(split, tasks, str(split_path))
    return split_tasks(split, part, tasks)


def main(argv: list[str] | None = None) -> int:
    """`python -m atrl.rl.split FILE PART`: print the part's ids, comma-separated."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m atrl.rl.split SPLIT_FILE train|heldout", file=sys.stderr)
        return 2
    try:
        print(",".join(load_split(args[0]).ids(args[1])))
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
