"""Static anti-cheat rules that hold under every PyTorch-compute policy (HARNESS-SPEC, stage 2).

`check_safety(tree, aliases)` walks the whole module (except `if __name__ == "__main__":` bodies,
which never run on import) and returns one `Violation` per offending construct: forbidden imports
and qualified names (after alias resolution), dangerous builtins, dunder walks, `try`, monkeypatching
assignments, tensor subclasses, and imports of the reference module. (Uses of the reference's names,
`Model`, `get_inputs`, ..., are the reach-based rule of `reference`.)

Imports are an allowlist: torch, triton, numpy (data and host-side shape arithmetic only; numpy
compute on tensors is caught by the compute rule), math, typing, dataclasses, functools and a few
other pure-Python standard modules. `os` and `sys` may be imported but only `os.path` and harmless
`sys` attributes may be used. Anything else is rejected as possible reference or harness access.
"""

from __future__ import annotations

import ast

from atrl.harness.static.common import Aliases, Violation, live_nodes, matches, violation
from atrl.harness.static.forbidden import (
    ALLOWED_DUNDERS,
    ALLOWED_IMPORT_ROOTS,
    ALWAYS,
    BUILTINS,
    FRAME_ATTRIBUTES,
    HIDDEN_COMPUTE_ATTRIBUTES,
    REEXPORTED_MODULE_ATTRIBUTES,
    STAR_IMPORTABLE,
    SUBCLASS_HOOKS,
    forbidden_rule,
)


def check_safety(tree: ast.Module, aliases: Aliases) -> list[Violation]:
    """All policy-independent violations in `tree` (unsorted)."""
    found: list[Violation] = []
    defined = _defined_names(tree)
    attribute_bases = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in live_nodes(tree):
        if isinstance(node, ast.Name) and id(node) not in attribute_bases and node.id in aliases.modules \
                and isinstance(node.ctx, ast.Load):
            found.append(violation("static:dynamic-code", node, f"module `{node.id}` used as a value",
                                   f"use its attributes directly (`{node.id}.name`)"))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.extend(_check_import(node))
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            found.append(violation("static:try-except", node, "`try` block",
                                   "remove it and let errors surface (no silent fallbacks)"))
        elif isinstance(node, ast.Name):
            found.extend(_check_name(node, defined))
        elif isinstance(node, ast.Attribute):
            found.extend(_check_attribute(node, aliases))
        elif isinstance(node, ast.Call):
            found.extend(_check_call(node, aliases))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            found.extend(_check_assignment(node, aliases))
        elif isinstance(node, ast.ClassDef):
            found.extend(_check_class(node, aliases))
        if isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.AsyncFor, ast.AsyncWith)):
            found.append(violation("static:concurrency", node, "async code",
                                   "write forward as a plain function that launches kernels"))
    return found


def _defined_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _check_import(node: ast.Import | ast.ImportFrom) -> list[Violation]:
    if isinstance(node, ast.ImportFrom) and node.level:
        return [violation("static:reference-access", node, "relative import",
                          "import only torch, triton and standard modules")]
    if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names) \
            and node.module not in STAR_IMPORTABLE:
        return [violation("static:dynamic-code", node, f"`from {node.module} import *`",
                          "import the names you use explicitly")]
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    else:
        modules = [f"{node.module}.{alias.name}" if alias.name != "*" else node.module or ""
                   for alias in node.names]  # fmt: skip
    found: list[Violation] = []
    for module in modules:
        ruled = forbidden_rule(module)
        if ruled is not None:
            found.append(violation(ruled[0], node, f"import of `{module}`", ruled[1]))
        elif module.split(".")[0] not in ALLOWED_IMPORT_ROOTS:
            found.append(violation("static:reference-access", node, f"import of `{module}`",
                                   "import only torch, triton, numpy, math and standard helpers "
                                   "(the reference module and the harness are off limits)"))
    return found


def _check_name(node: ast.Name, defined: set[str]) -> list[Violation]:
    if node.id in ALWAYS:
        rule, instead = ALWAYS[node.id]
        return [violation(rule, node, f"`{node.id}`", instead)]
    if node.id in BUILTINS and node.id not in defined:
        rule, instead = BUILTINS[node.id]
        return [violation(rule, node, f"`{node.id}`", instead)]
    if node.id == "__name__" and not isinstance(node.ctx, ast.Load):
        return [violation("static:dynamic-code", node, "assignment to `__name__`", "leave module names alone")]
    return []


def _check_attribute(node: ast.Attribute, aliases: Aliases) -> list[Violation]:
    if node.attr.startswith("__") and node.attr.endswith("__") and node.attr not in ALLOWED_DUNDERS:
        return [violation("static:dynamic-code", node, f"dunder attribute `.{node.attr}`",
                          "use the object's public attributes")]
    if node.attr in FRAME_ATTRIBUTES:
        return [violation("static:introspection", node, f"frame attribute `.{node.attr}`",
                          "do not inspect the caller's frames")]
    if node.attr in REEXPORTED_MODULE_ATTRIBUTES:
        return [violation("static:introspection", node, f"module `{node.attr}` reached as an attribute (`.{node.attr}`)",
                          f"import only what a kernel needs by name; `{node.attr}` reached through another module "
                          "opens the judging process")]
    if node.attr in HIDDEN_COMPUTE_ATTRIBUTES:
        rule, instead = HIDDEN_COMPUTE_ATTRIBUTES[node.attr]
        return [violation(rule, node, f"`.{node.attr}`", instead)]
    name = aliases.qualname(node)
    # Report a forbidden chain once, at its outermost forbidden prefix: `os.environ.get` is reported
    # at `os.environ`, so skip this node when its parent chain would already be reported.
    if name is None or forbidden_rule(name) is None:
        return []
    base = aliases.qualname(node.value)
    if base is not None and forbidden_rule(base) is not None:
        return []
    rule, instead = forbidden_rule(name)  # type: ignore[misc]
    return [violation(rule, node, f"use of `{name}`", instead)]


def _check_call(node: ast.Call, aliases: Aliases) -> list[Violation]:
    func = node.func
    found: list[Violation] = []
    if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "delattr", "hasattr"):
        target = node.args[0] if node.args else None
        second = node.args[1] if len(node.args) > 1 else None
        name = second.value if isinstance(second, ast.Constant) and isinstance(second.value, str) else None
        literal = name is not None
        on_module = target is not None and aliases.is_module_object(target)
        if func.id in ("setattr", "delattr") and on_module:
            found.append(violation("static:monkeypatch", node, f"`{func.id}` on a module",
                                   "do not modify torch, triton or other modules"))
        elif (on_module and not (literal and func.id == "hasattr")) or (not literal and func.id != "hasattr"):
            found.append(violation("static:dynamic-code", node, f"`{func.id}` with a computed name or on a module",
                                   "access attributes directly by name"))
        elif name is not None and name in HIDDEN_COMPUTE_ATTRIBUTES:
            rule, instead = HIDDEN_COMPUTE_ATTRIBUTES[name]
            found.append(violation(rule, node, f"`{func.id}` of `{name}`", instead))
        elif name is not None and name.startswith("__"):
            found.append(violation("static:dynamic-code", node, f"`{func.id}` of a dunder attribute",
                                   "use the object's public attributes"))
    if isinstance(func, ast.Name) and func.id == "type" and len(node.args) == 1:
        # `type(x)` hands over torch.Tensor (or a harness class) under a name the monkeypatch and
        # compute rules cannot follow: `T = type(x); T.sum = ...` or `T.relu(x)`.
        found.append(violation("static:monkeypatch", node, "`type(...)` of an object",
                               "call tensor methods by name; do not reach classes through type()"))
    if isinstance(func, ast.Attribute) and func.attr == "tofile":
        found.append(violation("static:file-access", node, "`.tofile()`", "keep all data in tensors"))
    if isinstance(func, ast.Attribute) and func.attr in ("as_subclass", "_make_subclass", "_make_wrapper_subclass"):
        found.append(violation("static:monkeypatch", node, f"`.{func.attr}()` (tensor subclass)",
                               "return plain torch tensors"))
    return found


def _assigned_targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        targets: list[ast.expr] = []
        for target in node.targets:
            targets.extend(_flatten(target))
        return targets
    if isinstance(node, ast.Delete):
        return [t for target in node.targets for t in _flatten(target)]
    return _flatten(node.target)  # type: ignore[attr-defined]


def _flatten(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [t for elt in target.elts for t in _flatten(elt)]
    if isinstance(target, ast.Starred):
        return _flatten(target.value)
    return [target]


def _check_assignment(node: ast.AST, aliases: Aliases) -> list[Violation]:
    found: list[Violation] = []
    for target in _assigned_targets(node):
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Attribute):
            root = target.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            name = aliases.qualname(target.value)
            if name is not None and not (isinstance(root, ast.Name) and root.id == "self"):
                found.append(violation("static:monkeypatch", target, f"assignment to `{name}.{target.attr}`",
                                       "do not modify torch, triton, time or other modules"))
    return found


def _check_class(node: ast.ClassDef, aliases: Aliases) -> list[Violation]:
    found: list[Violation] = []
    for base in node.bases:
        name = aliases.qualname(base)
        if name is not None and (matches(name, "torch.Tensor") or matches(name, "torch.nn.Parameter")):
            found.append(violation("static:monkeypatch", node, f"class `{node.name}` subclasses `{name}`",
                                   "return plain torch tensors"))
    for keyword in node.keywords:
        if keyword.arg == "metaclass":
            found.append(violation("static:dynamic-code", node, f"metaclass on `{node.name}`",
                                   "use a plain class"))
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name in SUBCLASS_HOOKS:
                found.append(violation("static:monkeypatch", stmt, f"`{stmt.name}` hook",
                                       "return plain torch tensors"))
            elif stmt.name in ("__exit__", "__aexit__"):
                found.append(violation("static:try-except", stmt, f"`{stmt.name}` (a context manager can swallow errors)",
                                       "let errors surface"))
    return found
