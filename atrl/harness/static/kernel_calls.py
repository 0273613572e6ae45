"""What a kernel body may call. A `@triton.jit` body is compiled for the device: it calls `tl`
functions, other `@triton.jit` functions, and plain Python helpers only on compile-time values
(Triton runs those while compiling: `half(BLOCK)` for a constexpr `BLOCK`). A plain helper given a
tensor, a lambda, or any `.handle` inside a kernel is code that a GPU compile rejects but Triton's
interpreter runs as host Python on its NumPy buffers (`x.handle.data[...] = np.tanh(...)`, the
kernel's result computed by NumPy): `static:host-code-in-kernel`."""

from __future__ import annotations

import ast

from atrl.harness.static.common import Violation, matches, violation
from atrl.harness.static.graph import ModuleIndex

RULE = "static:host-code-in-kernel"
INSTEAD = "compute with tl operations in the kernel, or decorate the helper with @triton.jit"
# Python calls Triton evaluates while compiling, on compile-time arguments
_COMPILE_TIME_CALLS = frozenset({"min", "max", "int", "float", "bool", "abs", "len", "range"})


def check_kernel_calls(index: ModuleIndex) -> list[Violation]:
    """`static:host-code-in-kernel` violations in every kernel body (unsorted)."""
    found: list[Violation] = []
    for kernel in index.kernel_nodes:
        constant, local_names = _compile_time_names(kernel, index)
        for node in ast.walk(kernel):
            if _is_handle_access(node):
                found.append(violation(RULE, node, f"`{ast.unparse(node)[:40]}` reads the interpreter's own buffer "
                                                   f"inside kernel `{kernel.name}`", INSTEAD))
            elif isinstance(node, ast.Call):
                helper = _plain_helper(node.func, kernel, index)
                if helper is None:
                    continue
                args = [*node.args, *(k.value for k in node.keywords)]
                if isinstance(helper, ast.Lambda) or not all(_compile_time(a, constant, local_names, index) for a in args):
                    name = ast.unparse(node.func)[:40]
                    found.append(violation(RULE, node, f"kernel `{kernel.name}` calls the plain Python function "
                                                       f"`{name}` on tensor values: a GPU compile rejects it, and "
                                                       "Triton's interpreter would run it as host code", INSTEAD))
    return found


def _is_handle_access(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "handle":
        return True
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "handle")


def _plain_helper(func: ast.expr, kernel: ast.FunctionDef, index: ModuleIndex) -> ast.AST | None:
    """The user function (not a kernel, not a `constexpr_function`) that a call in `kernel` names."""
    candidates: list[ast.AST] = []
    if isinstance(func, ast.Name):
        candidates = list(index.resolve(func, kernel))
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in index.classes:
        method = index.method(func.value.id, func.attr)
        candidates = [method] if method is not None else []
    for candidate in candidates:
        if id(candidate) in index.kernels:
            continue
        decorators = getattr(candidate, "decorator_list", [])
        if any("constexpr_function" in ast.unparse(d) for d in decorators):
            continue
        return candidate
    return None


def _compile_time_names(kernel: ast.FunctionDef, index: ModuleIndex) -> tuple[set[str], set[str]]:
    """(names in `kernel` that hold compile-time values, all its parameters and locals). Compile-time:
    `tl.constexpr` parameters, and locals every assignment of which is compile-time (to a fixed
    point). A name that is neither a parameter nor a local is a global: compile-time to Triton."""
    args = kernel.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    constant = {a.arg for a in params if a.annotation is not None and ast.unparse(a.annotation).endswith("constexpr")}
    assigned: dict[str, list[ast.expr | None]] = {a.arg: [None] for a in params if a.arg not in constant}
    for node in ast.walk(kernel):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        assigned.setdefault(name.id, []).append(node.value)
        elif isinstance(node, (ast.For, ast.comprehension)):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    assigned.setdefault(name.id, []).append(None)  # a loop variable may be a tensor
    local_names = set(assigned) | constant
    known = set(constant)
    while True:
        grown = {name for name, values in assigned.items() if name not in known
                 and all(v is not None and _compile_time(v, known, local_names, index) for v in values)}
        if not grown:
            return known, local_names
        known |= grown


def _compile_time(expr: ast.expr, constant: set[str], local_names: set[str], index: ModuleIndex) -> bool:
    """Whether `expr` is built from literals, compile-time names, globals and compile-time calls."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Name):
        return expr.id in constant or expr.id not in local_names
    if isinstance(expr, ast.Attribute):
        return index.aliases.qualname(expr) is not None or _compile_time(expr.value, constant, local_names, index)
    if isinstance(expr, ast.Call):
        name = index.aliases.qualname(expr.func)
        plain = isinstance(expr.func, ast.Name) and expr.func.id in _COMPILE_TIME_CALLS
        triton_host = name is not None and matches(name, "triton") and not matches(name, "triton.language")
        args = [*expr.args, *(k.value for k in expr.keywords)]
        return (plain or triton_host) and all(_compile_time(a, constant, local_names, index) for a in args)
    if isinstance(expr, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Tuple, ast.List)):
        children = [c for c in ast.iter_child_nodes(expr) if isinstance(c, ast.expr)]
        return all(_compile_time(c, constant, local_names, index) for c in children)
    return False
