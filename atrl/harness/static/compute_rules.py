"""The checks of the strict PyTorch-compute rule over each reachable host function, given the taints
computed by `compute.ComputeChecker` (see that module for the analysis and the rule list)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from atrl.harness.static.common import Violation, matches, violation
from atrl.harness.static.compute import (
    CAST_METHODS,
    COMPUTE_MODULES,
    CONTAINER_ADDS,
    DTYPE_NAMES,
    INSTEAD,
    LAYER,
    LAYER_SAFE_METHODS,
    REDUCING_BUILTINS,
    RULE,
    TENSOR,
    ComputeChecker,
    load_allowlist,
    on_host_values,
)
from atrl.harness.static.forbidden import forbidden_rule
from atrl.harness.static.graph import FunctionNode, ModuleIndex, Reach, _own_nodes

_ALLOWED_COMPARISONS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)
_TENSOR_UNARY = (ast.USub, ast.UAdd, ast.Invert)


def check_compute(index: ModuleIndex, reach: Reach, allow_torch: Iterable[str] = ()) -> list[Violation]:
    """Strict-policy violations in the host code reachable from ModelNew.forward (unsorted)."""
    checker = ComputeChecker(index, reach, load_allowlist().extended(allow_torch)).solve()
    found: list[Violation] = []
    for fn in reach.functions:
        found.extend(check_function(checker, fn, checker.envs.get(id(fn), {})))
    found.extend(_passed_at_import(checker, index.tree))
    return found


def _passed_at_import(ck: ComputeChecker, tree: ast.Module) -> list[Violation]:
    """A torch function named as a value where the module is imported (a table `(F.mse_loss, ...)`,
    a decorator's argument such as a heuristic `functools.partial(F.relu, buf)`, a default value):
    whoever calls it later — the launcher, a subscripted call — computes with PyTorch."""
    nodes = _evaluated_at_import(tree)
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    bases = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
    found = []
    for node in nodes:
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) \
                and id(node) not in called and id(node) not in bases:
            name = ck.aliases.qualname(node)
            if name is not None and ck._torch_callable(name) and name not in ck.allow.layers \
                    and not ck.aliases.is_module_object(node):
                found.append(violation(RULE, node, f"`{name}` is passed as a function (PyTorch compute)", INSTEAD))
    return found


def _evaluated_at_import(tree: ast.Module) -> list[ast.AST]:
    """The module's statements and class bodies, with the decorators and default values of its
    functions and lambdas, but not their bodies (checked when reachable from forward) nor
    annotations (`DTYPE: torch.dtype = ...` names a type)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            stack.extend([*getattr(node, "decorator_list", []), *defaults])
        elif isinstance(node, ast.AnnAssign):
            stack.extend([node.target, *([node.value] if node.value is not None else [])])
        else:
            stack.extend(ast.iter_child_nodes(node))
    return out


def check_function(ck: ComputeChecker, fn: FunctionNode, env: dict[str, int]) -> list[Violation]:
    """Violations of the strict rule in `fn`'s own code (nested functions are checked on their own)."""
    nodes = _own_nodes(fn) if not isinstance(fn, ast.Lambda) else list(ast.walk(fn.body))
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    bases = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
    found: list[Violation] = []

    def tainted(expr: ast.expr) -> bool:
        return bool(ck.taint(expr, env, fn) & TENSOR)

    def report(node: ast.AST, what: str, instead: str = INSTEAD) -> None:
        found.append(violation(RULE, node, what, instead))

    for node in nodes:
        if isinstance(node, ast.Call):
            _check_call(ck, node, env, fn, report)
        elif isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.MatMult):
                report(node, "the `@` operator is a PyTorch matmul", "use tl.dot inside a Triton kernel")
            elif tainted(node.left) or tainted(node.right):
                report(node, f"`{_short(node)}` is PyTorch arithmetic on a tensor")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, _TENSOR_UNARY) and tainted(node.operand):
            report(node, f"`{_short(node)}` is PyTorch arithmetic on a tensor")
        elif isinstance(node, ast.Compare) and not all(isinstance(op, _ALLOWED_COMPARISONS) for op in node.ops):
            if any(tainted(side) for side in [node.left, *node.comparators]):
                report(node, f"`{_short(node)}` compares tensors with PyTorch")
        elif isinstance(node, ast.AugAssign) and (tainted(node.target) or tainted(node.value)):
            report(node, f"`{_short(node)}` updates a tensor with PyTorch")
        elif isinstance(node, ast.Subscript):
            if not isinstance(node.ctx, ast.Load) and tainted(node.value):
                report(node, f"`{_short(node)} = ...` writes into a tensor with PyTorch",
                       "write the values from a Triton kernel (allocate with torch.empty/zeros)")
            elif tainted(node.slice):
                report(node, f"`{_short(node)}` indexes with a tensor (a PyTorch gather)")
        elif isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in called and id(node) not in bases:
            name = ck.aliases.qualname(node)
            if name is not None and isinstance(node.ctx, ast.Load) and ck._torch_callable(name) \
                    and name not in ck.allow.layers and not ck.aliases.is_module_object(node):
                report(node, f"`{name}` is passed as a function (PyTorch compute)")
    return found


def _check_call(ck: ComputeChecker, call: ast.Call, env: dict[str, int], fn: FunctionNode, report) -> None:
    func = call.func
    if isinstance(func, ast.Subscript) or ck._callees(func, fn):
        return  # a launch, or a user function checked on its own
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr" \
            and len(func.args) > 1 and isinstance(func.args[1], ast.Constant):
        func = ast.Attribute(value=func.args[0], attr=str(func.args[1].value), ctx=ast.Load())
        ast.copy_location(func, call)
    name = ck.aliases.qualname(func)
    args_taint = ck._args_taint(call, env, fn)
    args_tainted = bool(args_taint & TENSOR)
    if name is not None:
        if matches(name, "torch"):
            if forbidden_rule(name) or name in ck.allow.functions or name in ck.allow.layers:
                return
            if on_host_values(name, args_taint):
                return  # shape arithmetic, not the task's
            if matches(name, "torch.Tensor") and name.split(".")[-1] in ck.allow.methods:
                return
            report(call, f"`{name}(...)` computes with PyTorch")
        elif any(matches(name, module) for module in COMPUTE_MODULES) and args_tainted:
            report(call, f"`{name}(...)` computes on tensor data on the host")
        return
    if isinstance(func, ast.Name) and func.id in REDUCING_BUILTINS and func.id not in env and args_tainted:
        report(call, f"`{func.id}(...)` reduces tensors with PyTorch")
        return
    func_taint = ck.taint(func, env, fn)
    if isinstance(func, ast.Attribute):
        if ck._super_of_torch_layer(func.value, fn):
            report(call, f"`super().{func.attr}(...)` runs a torch.nn layer")
            return
        base = ck.taint(func.value, env, fn)
        if base & LAYER and func.attr not in LAYER_SAFE_METHODS:
            report(call, f"`{_short(func)}(...)` runs a torch.nn layer", "pass its .weight/.bias to a Triton kernel")
            return
        if base & TENSOR and not base & LAYER:
            _check_method(ck, call, func, env, fn, report)
            return
    if func_taint & LAYER:
        layers = ck._layer_names(func.attr, fn) if isinstance(func, ast.Attribute) else set()
        if layers and layers <= ck.allow.layers:
            return
        report(call, f"`{_short(func)}(...)` calls a torch.nn layer or torch function",
               "pass its .weight/.bias to a Triton kernel")


def _check_method(ck: ComputeChecker, call: ast.Call, func: ast.Attribute, env: dict[str, int],
                  fn: FunctionNode, report) -> None:
    method = func.attr
    if method in CONTAINER_ADDS:  # no tensor has these: a container that holds tensors
        return
    if method == "to" and _is_cast(ck, call, env, fn):
        report(call, "`.to(<dtype>)` is a dtype cast (compute)", "cast inside the Triton kernel (x.to(tl.float32))")
    elif method in ck.allow.methods:
        return
    elif method in CAST_METHODS:
        report(call, f"`.{method}()` is a dtype cast (compute)", "cast inside the Triton kernel")
    else:
        report(call, f"tensor method `.{method}()` computes with PyTorch")


def _is_cast(ck: ComputeChecker, call: ast.Call, env: dict[str, int], fn: FunctionNode) -> bool:
    if any(k.arg == "dtype" for k in call.keywords):
        return True
    for arg in call.args:
        name = ck.aliases.qualname(arg)
        if name is not None and matches(name, "torch") and name.split(".")[-1] in DTYPE_NAMES:
            return True
        if isinstance(arg, ast.Attribute) and arg.attr == "dtype":
            return True
        if isinstance(arg, ast.Name) and "dtype" in arg.id.lower():
            return True
        if ck.taint(arg, env, fn) & TENSOR:
            return True
    return False


def _short(node: ast.AST, limit: int = 40) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."
