"""Resize a task in memory by rewriting its module-level integer constants.

`substitute_constants` replaces the right-hand side of top-level assignments `NAME = <int expr>`
with new values. Constants derived from others (`HIDDEN = 4 * DIM`) are left as expressions, so
they stay consistent when the module is executed. `cap_constants` shrinks every top-level integer
constant above a cap (KernelBench's `--max-dim`), then re-derives the rest the same way.
Nothing here executes the task's code.
"""

from __future__ import annotations

import ast

from atrl.astnames import parse_source


def _is_int_literal(node: ast.expr) -> bool:
    """An integer written as a literal, possibly with arithmetic on literals only (`1 << 20`, `2**14`)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _is_int_literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_int_literal(node.left) and _is_int_literal(node.right)
    return False


def _literal_value(node: ast.expr) -> int:
    return int(eval(compile(ast.Expression(node), "<const>", "eval"), {"__builtins__": {}}))


def _assigned_values(stmt: ast.stmt) -> list[tuple[str, ast.expr]]:
    """(name, value node) pairs of a top-level assignment: `N = ...`, `N: int = ...`, element-wise
    tuple unpacking `H, W = 32, 64` (both sides written out with equal length), chained
    `H = W = 64`, which is one constant named by its first target (the others follow it), and
    the elements of a written-out tuple `SHAPE = (4096, 64)`, named `SHAPE[0]`, `SHAPE[1]`."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) > 1:
        if all(isinstance(t, ast.Name) for t in stmt.targets):
            return [(stmt.targets[0].id, stmt.value)]  # type: ignore[attr-defined]
    elif isinstance(stmt, ast.Assign):
        target = stmt.targets[0]
        if isinstance(target, ast.Name) and isinstance(stmt.value, (ast.Tuple, ast.List)):
            elements = [(f"{target.id}[{i}]", v) for i, v in enumerate(stmt.value.elts)]
            return [(target.id, stmt.value), *elements]
        if isinstance(target, ast.Name):
            return [(target.id, stmt.value)]
        if (
            isinstance(target, (ast.Tuple, ast.List))
            and isinstance(stmt.value, (ast.Tuple, ast.List))
            and len(target.elts) == len(stmt.value.elts)
            and all(isinstance(t, ast.Name) for t in target.elts)
        ):
            return [(t.id, v) for t, v in zip(target.elts, stmt.value.elts, strict=True)]
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return [(stmt.target.id, stmt.value)]
    return []


def integer_constants(source: str) -> dict[str, int]:
    """Top-level `NAME = <integer literal expression>` assignments, in file order, including the
    elements of `A, B = 1, 2` and of `SHAPE = (4096, 64)` (keys `SHAPE[0]`, `SHAPE[1]`)."""
    found: dict[str, int] = {}
    for stmt in parse_source(source).body:
        for name, value in _assigned_values(stmt):
            if _is_int_literal(value):
                found[name] = _literal_value(value)
    return found


def substitute_constants(source: str, values: dict[str, int]) -> str:
    """Return `source` with each top-level assignment to a name in `values` set to that value.

    Raises `KeyError` naming constants that the source does not assign at top level.
    Lines are edited in place so line numbers (and the rest of the text) are preserved.
    """
    if not values:
        return source
    lines = source.splitlines(keepends=True)
    seen: set[str] = set()
    edits: list[tuple[int, int, int, int, str]] = []
    for stmt in parse_source(source).body:
        for target, v in _assigned_values(stmt):
            if target in values:
                edits.append((v.lineno, v.col_offset, v.end_lineno or v.lineno, v.end_col_offset or 0,
                              repr(int(values[target]))))
                seen.add(target)
    missing = set(values) - seen
    if missing:
        raise KeyError(f"no top-level constant(s) {sorted(missing)} to substitute")
    for line0, col0, line1, col1, text in sorted(edits, reverse=True):
        first = lines[line0 - 1]
        last = lines[line1 - 1]
        merged = first[:col0] + text + last[col1:]
        lines[line0 - 1 : line1] = [merged]
    return "".join(lines)


def cap_constants(source: str, max_dim: int, keep: set[str] | None = None) -> tuple[str, dict[str, int]]:
    """Shrink every literal top-level integer constant greater than `max_dim` to `max_dim`.

    Constants named in `keep` are untouched. Derived constants (expressions of other names) are
    re-evaluated when the module runs, so they follow. Returns the new source and the
    substitutions made (name -> new value).
    """
    keep = keep or set()
    changes = {
        name: max_dim for name, value in integer_constants(source).items() if value > max_dim and name not in keep
    }
    return substitute_constants(source, changes), changes
