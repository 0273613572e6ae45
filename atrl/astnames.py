"""Names in Python source trees, shared by the readers of candidate and reference code."""

from __future__ import annotations

import ast


def dotted_name(node: ast.AST) -> str | None:
    """`tl.program_id` for the expression `tl.program_id`, `x` for `x`; None when the chain does
    not end in a plain name (a call's result, a subscript, a literal)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
