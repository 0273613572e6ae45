"""Shared pieces of the static stage: the `Violation` record, import-alias resolution and a walker.

Aliases are resolved so that no rule can be dodged by renaming: `import torch.nn.functional as F`,
`from os import system`, `import subprocess as sp` and plain rebinding such as `f = torch.relu` all map
a local name to the fully qualified name it stands for (`F.relu` → `torch.nn.functional.relu`).
Resolution ignores scopes on purpose: an alias bound anywhere counts everywhere (over-approximation).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class Violation:
    """One static rejection: `rule` is a `static:*` key of `FAILURE_CLASSES`, `line` is 1-based, and
    `message` (shown to the model as feedback) names the rule, the construct and what to do instead."""

    rule: str
    line: int
    message: str


def violation(rule: str, node: ast.AST | int, what: str, instead: str) -> Violation:
    """A violation whose message reads `<rule> (line N): <what>; <instead>`."""
    line = node if isinstance(node, int) else getattr(node, "lineno", 0)
    return Violation(rule, line, f"{rule} (line {line}): {what}; {instead}")


class Aliases:
    """Local name → qualified name, from every import and every `name = <qualified expr>` binding."""

    def __init__(self, tree: ast.Module) -> None:
        self.names: dict[str, str] = {}
        self.modules: set[str] = set()  # local names bound to a module object
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.names[local] = alias.name if alias.asname else local
                    self.modules.add(local)
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    if alias.name != "*":
                        local = alias.asname or alias.name
                        self.names[local] = f"{module}.{alias.name}"
                        if self.names[local] in KNOWN_SUBMODULES:
                            self.modules.add(local)
        # Rebinding (`f = torch.relu`) can chain (`g = f`): iterate to a fixed point.
        for _ in range(8):
            changed = False
            for node in ast.walk(tree):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    resolved = self.qualname(node.value)
                    for target in targets:
                        if isinstance(target, ast.Name) and resolved and self.names.get(target.id) != resolved:
                            self.names[target.id] = resolved
                            if self.is_module_object(node.value):
                                self.modules.add(target.id)
                            changed = True
            if not changed:
                break

    def qualname(self, node: ast.AST) -> str | None:
        """`torch.nn.functional.relu` for `F.relu` and the like; None when the root is not an alias."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.names:
            return None
        parts.append(self.names[node.id])
        return ".".join(reversed(parts))

    def is_module_object(self, node: ast.AST) -> bool:
        """Whether `node` is an imported module (`torch`, `F`) or a submodule chain (`torch.cuda`)."""
        if isinstance(node, ast.Name):
            return node.id in self.modules
        return self.qualname(node) in KNOWN_SUBMODULES


# Submodules commonly imported with `from pkg import sub`; a from-import of one binds a module.
KNOWN_SUBMODULES = frozenset(
    {
        "torch.nn", "torch.nn.functional", "torch.cuda", "torch.linalg", "torch.fft", "torch.special",
        "torch.backends", "torch.utils", "torch.autograd", "torch.distributed", "torch.multiprocessing",
        "torch.library", "torch.jit", "torch.profiler", "torch.random", "torch.npu", "triton.language",
        "triton.language.math", "triton.language.extra", "triton.runtime", "triton.testing",
        "numpy.random", "numpy.linalg", "os.path", "concurrent.futures", "urllib.request",
        "importlib.util", "importlib.machinery",
    }
)  # fmt: skip


def matches(qualname: str, prefix: str) -> bool:
    """Whether `qualname` is `prefix` or inside it, on dotted boundaries (`os.path` is not `os.pathx`)."""
    return qualname == prefix or qualname.startswith(prefix + ".")


def is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":` — its body never runs when the harness imports the candidate."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    has_name = any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
    has_main = any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)
    return has_name and has_main


def live_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """Every node of the module except the bodies of `if __name__ == "__main__":` blocks
    (their `else` branches are kept: they do run on import)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and is_main_guard(node):
            stack.extend(reversed([node.test, *node.orelse]))
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def live_module(tree: ast.Module) -> ast.Module:
    """A copy-free view of the module without `__main__` blocks, for analyses that walk the tree."""
    body: list[ast.stmt] = []
    for stmt in tree.body:
        if is_main_guard(stmt):
            body.extend(stmt.orelse)  # type: ignore[attr-defined]
        else:
            body.append(stmt)
    return ast.Module(body=body, type_ignores=[])
