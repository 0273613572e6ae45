"""Planted faults in a correct kernel's source, for wrong variants with a known cause."""

from __future__ import annotations

import ast

from atrl.astnames import parse_source


class _StoresPlusOne(ast.NodeTransformer):
    """Rewrites the value argument of every `tl.store(ptr, value, ...)` to `value + 1`."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "store" and len(node.args) >= 2:
            node.args[1] = ast.BinOp(left=node.args[1], op=ast.Add(), right=ast.Constant(1))
        return node


def plus_one_variant(source: str) -> str | None:
    """`source` with every `tl.store` writing `value + 1` (every store: a kernel may take a branch
    the last store is not on); None when it has no store."""
    tree = parse_source(source)
    if not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "store"
               for n in ast.walk(tree)):
        return None
    return ast.unparse(ast.fix_missing_locations(_StoresPlusOne().visit(tree)))
