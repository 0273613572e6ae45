"""The builtin suite: our own tasks, shipped in `atrl/tasks/builtin/level{1,2,3}/`.

Each task is one file `<name>.py`: a module-level `TASK = {...}` dict literal (metadata), then a
self-contained reference module (`Model`, `get_inputs`, `get_init_inputs`) whose module-level
integer constants are its `full` size. `TASK["presets"]` gives the constant values of the
`small` and `full` presets. An optional `<name>.solution.py` beside it is the reference Triton
solution (`ModelNew`). Metadata is read with `ast.literal_eval`: loading executes nothing.

TASK keys: tags (list), dtype, atol, rtol, precision_bound, presets, flags (name -> reason),
compute_policy ("strict"|"partial"), reference_mutates_inputs, allow_torch (list), description.
"""

from __future__ import annotations

import ast
from pathlib import Path

from atrl.astnames import parse_source
from atrl.errors import TaskLoadError
from atrl.tasks.task import Task

BUILTIN_DIR = Path(__file__).parent / "builtin"  # the task files (data, not a package)
SOLUTION_SUFFIX = ".solution.py"
_KNOWN_KEYS = {
    "tags", "dtype", "atol", "rtol", "precision_bound", "presets", "flags", "compute_policy",
    "reference_mutates_inputs", "allow_torch", "description",
}


_LITERAL_NODES = (
    ast.Constant, ast.Dict, ast.List, ast.Tuple, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult,
    ast.Pow, ast.LShift, ast.FloorDiv, ast.Div, ast.USub, ast.Load,
)


def literal_value(node: ast.expr):
    """Evaluate a literal that may use arithmetic on literals (`1 << 20`, `2**-10`). Raises ValueError."""
    for sub in ast.walk(node):
        if not isinstance(sub, _LITERAL_NODES):
            raise ValueError(f"not a literal: {ast.dump(sub)[:60]}")
    return eval(compile(ast.Expression(node), "<TASK>", "eval"), {"__builtins__": {}})


def _read_meta(path: Path, source: str) -> tuple[dict, str]:
    try:
        tree = parse_source(source, filename=str(path))
    except SyntaxError as exc:
        raise TaskLoadError(str(path), f"syntax error on line {exc.lineno}: {exc.msg}", "fix the file") from None
    meta = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TASK" for t in stmt.targets):
            try:
                meta = literal_value(stmt.value)
            except ValueError:
                raise TaskLoadError(str(path), "TASK must be a dict literal", "write TASK = {...} with literal values") from None
    if not isinstance(meta, dict):
        raise TaskLoadError(str(path), "no TASK = {...} metadata dict", "add TASK with tags and presets")
    unknown = set(meta) - _KNOWN_KEYS
    if unknown:
        raise TaskLoadError(str(path), f"unknown TASK keys {sorted(unknown)}", f"use only {sorted(_KNOWN_KEYS)}")
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for needed in ("Model", "get_inputs", "get_init_inputs"):
        if needed not in names:
            raise TaskLoadError(str(path), f"does not define {needed}", "every task defines Model, get_inputs, get_init_inputs")
    doc = ast.get_docstring(tree) or ""
    return meta, doc


def load_builtin_task(path: Path, level: int) -> Task:
    source = path.read_text()
    meta, doc = _read_meta(path, source)
    name = path.name[: -len(".py")]
    solution_path = path.with_name(name + SOLUTION_SUFFIX)
    presets = {k: dict(v) for k, v in meta.get("presets", {}).items()}
    from atrl.tasks.resize import integer_constants

    constants = integer_constants(source)
    for preset, values in presets.items():
        missing = set(values) - set(constants)
        if missing:
            raise TaskLoadError(str(path), f"preset {preset!r} sets unknown constants {sorted(missing)}",
                                "name only top-level integer constants of the file")
    return Task(
        id=f"builtin/{name}",
        suite="builtin",
        name=name,
        level=level,
        source=source,
        tags=list(meta.get("tags", [])),
        description=meta.get("description") or (doc.strip().splitlines() or [""])[0],
        dtype=meta.get("dtype", "float32"),
        atol=meta.get("atol"),
        rtol=meta.get("rtol"),
        precision_bound=meta.get("precision_bound"),
        presets=presets,
        flags=dict(meta.get("flags", {})),
        solution=solution_path.read_text() if solution_path.exists() else None,
        path=str(path),
        compute_policy=meta.get("compute_policy", "strict"),
        reference_mutates_inputs=bool(meta.get("reference_mutates_inputs", False)),
        allow_torch=list(meta.get("allow_torch", [])),
    )


def builtin_task_files(root: Path = BUILTIN_DIR) -> list[tuple[int, Path]]:
    files = []
    for level_dir in sorted(root.glob("level*")):
        level = int(level_dir.name[len("level"):])
        for path in sorted(level_dir.glob("*.py")):
            if path.name.endswith(SOLUTION_SUFFIX) or path.name.startswith("_"):
                continue
            files.append((level, path))
    return files


def load_builtin(root: Path = BUILTIN_DIR) -> tuple[list[Task], list[TaskLoadError]]:
    """All builtin tasks, and an error per file that could not be read (the rest still load)."""
    tasks, errors = [], []
    for level, path in builtin_task_files(root):
        try:
            tasks.append(load_builtin_task(path, level))
        except TaskLoadError as exc:
            errors.append(exc)
    return tasks, errors
