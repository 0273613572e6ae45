"""Names in Python source trees, shared by the readers of candidate and reference code."""

from __future__ import annotations

import ast
import warnings


def parse_source(source: str) -> ast.Module:
    """`ast.parse`, without the warnings about an invalid escape such as "\\s" in a string
    (SyntaxWarning from Python 3.12, DeprecationWarning before) that it would print once per
    parse in the judging process: model-written code has many."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source)


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
