"""Names in Python source trees, shared by the readers of candidate and reference code."""

from __future__ import annotations

import ast
import symtable
import threading
import warnings

# CPython 3.11 keeps the AST constructor's recursion counter per interpreter, not per thread:
# parses running at once in several threads (the harness's pool threads beside the caller) can
# fail with "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905).
_PARSE_LOCK = threading.RLock()  # re-entrant: a parse that runs inside another (a finalizer) must not deadlock


def parse_source(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, one thread at a time (see above), and without the warnings about an invalid
    escape such as "\\s" in a string (SyntaxWarning from Python 3.12, DeprecationWarning before)
    that it would print once per parse in the judging process: model-written code has many."""
    with _PARSE_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source, filename=filename)


def symbol_table(source: str, filename: str = "<unknown>") -> symtable.SymbolTable:
    """`symtable.symtable` of a module, under the same lock and without the same warnings."""
    with _PARSE_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return symtable.symtable(source, filename, "exec")


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
