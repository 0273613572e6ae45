"""The NPUKernelBench suite (Triton-Ascend form): multi-case tasks read statically.

Layout: level folders `level<L>` or `npukernelbench_level<L>` (L = 0..4), directly under the
given root or under its `reference/` folder (a MultiKernelBench checkout). Each task is
`<id>_<name>.py` defining `Model`, `get_init_inputs()` and `get_input_groups()`, with a sibling
`<id>_<name>.json` of JSON lines: one shape case per line, `{"inputs": [...]}` (or the bare list),
each input a named tensor (`dtype`, `shape`), tensor list (`dtype`, `shapes`), scalar or
attribute (`value`). Every case must pass, so tasks are `multi_case` with one `ShapeCase` per line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from atrl.errors import TaskLoadError
from atrl.tasks.kernelbench import describe, infer_flags, infer_tags, parse_module
from atrl.tasks.task import ShapeCase, Task

SUITE = "npukernelbench"
FILE_RE = re.compile(r"^(\d+)_(.+)\.py$")
LEVEL_DIR_RE = re.compile(r"^(?:npukernelbench_)?level(\d+)$")
REQUIRED = ("Model", "get_init_inputs", "get_input_groups")
# The benchmark's tolerances: dtype -> (rtol, atol).
NPU_TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (2.0**-13, 1e-5),
    "float16": (2.0**-10, 1e-3),
    "bfloat16": (2.0**-7, 1e-2),
}
LOOSEST_FIRST = ("bfloat16", "float16", "float32")
DTYPE_ALIASES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64", "half": "float16",
                 "float": "float32", "double": "float64"}
TENSOR_KINDS = ("tensor", "tensor_list", "scalar")


def normalize_dtype(name: object) -> str:
    """`bf16` -> `bfloat16`, `fp32` -> `float32`, ...; other names unchanged."""
    text = str(name)
    return DTYPE_ALIASES.get(text, text)


def case_dtypes(case: ShapeCase) -> list[str]:
    """The (normalized) dtypes of a case's tensor inputs, in input order, without repeats."""
    found = [normalize_dtype(i["dtype"]) for i in case.spec if i.get("type") in TENSOR_KINDS and "dtype" in i]
    return list(dict.fromkeys(found))


def task_dtype(cases: list[ShapeCase]) -> str:
    """The loosest floating dtype (bfloat16 > float16 > float32) among all cases' tensors; else the
    first tensor dtype seen (integer or bool tasks); else float32."""
    seen = [d for c in cases for d in case_dtypes(c)]
    for dtype in LOOSEST_FIRST:
        if dtype in seen:
            return dtype
    return seen[0] if seen else "float32"


def npu_tolerances(dtype: str) -> tuple[float, float]:
    """(rtol, atol) NPUKernelBench uses for `dtype`; float32's for dtypes it does not list
    (integers and bools then compare exactly within float32's tight bound)."""
    return NPU_TOLERANCES.get(normalize_dtype(dtype), NPU_TOLERANCES["float32"])


def describe_case(case: ShapeCase) -> str:
    """One line per case: `x: float16[3, 4], alpha=0.5`."""
    parts = []
    for item in case.spec:
        name = item.get("name", "?")
        kind = item.get("type")
        if kind == "tensor_list":
            shapes = " ".join(str(list(s)) for s in item.get("shapes", []))
            parts.append(f"{name}: {normalize_dtype(item.get('dtype'))}[{shapes}]")
        elif kind in ("tensor", "scalar") and item.get("shape") is None and "value" not in item:
            parts.append(f"{name}: None")
        elif kind in ("tensor", "scalar") and "shape" in item:
            parts.append(f"{name}: {normalize_dtype(item.get('dtype'))}{list(item['shape'])}")
        else:
            parts.append(f"{name}={json.dumps(item.get('value'))}")
    return ", ".join(parts)


def read_cases(path: Path) -> list[ShapeCase]:
    """Shape cases from a JSON-lines file (blank lines skipped). Raises `TaskLoadError` naming the
    file and line of a malformed case, or the file if it is missing or has no case."""
    if not path.is_file():
        raise TaskLoadError(str(path), "shape-case file is missing", "put the task's JSON lines beside its .py file")
    cases: list[ShapeCase] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TaskLoadError(where, f"not valid JSON ({exc.msg})", "one JSON object per line") from None
        inputs = record.get("inputs") if isinstance(record, dict) else record
        if not isinstance(inputs, list) or not all(isinstance(i, dict) and "name" in i for i in inputs):
            raise TaskLoadError(where, "expected a list of named inputs (or {\"inputs\": [...]})")
        for item in inputs:
            # an optional tensor (`"required": false`) may be absent: `"shape": null`
            shape = item.get("shape", ...)
            absent_ok = shape is None and not item.get("required", True)
            if item.get("type") == "tensor" and not ("dtype" in item and (isinstance(shape, list) or absent_ok)):
                raise TaskLoadError(where, f"tensor input {item['name']!r} needs a dtype and a shape list")
        cases.append(ShapeCase(name=f"case{len(cases):02d}", spec=inputs))
    if not cases:
        raise TaskLoadError(str(path), "holds no shape case", "write one JSON line per case")
    return cases


def load_npukernelbench_task(path: Path, level: int) -> Task:
    """One task file and its JSON cases as a multi-case `Task` (raises `TaskLoadError`).

    Tolerances are NPUKernelBench's for the task's dtype. A task whose cases mix dtypes gets the
    loosest one's (bfloat16 before float16 before float32), since every case must pass under the
    one pair a `Task` holds; `npu_tolerances(case dtype)` gives a case's own pair.
    """
    match = FILE_RE.match(path.name)
    if not match:
        raise TaskLoadError(str(path), "file name is not <id>_<name>.py")
    source, tree = parse_module(path, REQUIRED)
    name = path.name[: -len(".py")]
    cases = read_cases(path.with_suffix(".json"))
    dtype = task_dtype(cases)
    rtol, atol = npu_tolerances(dtype)
    return Task(
        id=f"{SUITE}/level{level}/{name}",
        suite=SUITE,
        name=name,
        level=level,
        source=source,
        tags=infer_tags(tree, match.group(2)),
        description=describe(tree, match.group(2)),
        dtype=dtype,
        atol=atol,
        rtol=rtol,
        cases=cases,
        multi_case=True,
        flags=infer_flags(tree),
        path=str(path),
        compute_policy="strict",
    )


def level_dirs(root: Path) -> list[tuple[int, Path]]:
    """(level, folder) for the level folders under `root` or `root/reference`, by level."""
    found: list[tuple[int, Path]] = []
    for base in (root, root / "reference"):
        if not base.is_dir():
            continue
        for child in base.iterdir():
            match = LEVEL_DIR_RE.match(child.name)
            if match and child.is_dir():
                found.append((int(match.group(1)), child))
        if found:
            break
    return sorted(found)


def _file_order(path: Path) -> tuple[int, str]:
    match = FILE_RE.match(path.name)
    return (int(match.group(1)) if match else 1 << 30, path.name)


def load_npukernelbench(root: Path) -> tuple[list[Task], list[TaskLoadError]]:
    """All NPUKernelBench tasks under `root` (ordered by level, then id) and one `TaskLoadError`
    per task that could not be read (the others still load)."""
    tasks: list[Task] = []
    errors: list[TaskLoadError] = []
    dirs = level_dirs(Path(root))
    if not dirs:
        errors.append(TaskLoadError(str(root), "no level<N> or npukernelbench_level<N> folders",
                                    "point --path at the NPUKernelBench folders or a MultiKernelBench checkout"))
    for level, folder in dirs:
        for path in sorted(folder.glob("*.py"), key=_file_order):
            if path.name.startswith("_"):
                continue
            try:
                tasks.append(load_npukernelbench_task(path, level))
            except TaskLoadError as exc:
                errors.append(exc)
    return tasks, errors
