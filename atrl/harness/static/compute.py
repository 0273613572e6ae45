"""The `strict` PyTorch-compute rule: host code reached from `ModelNew.forward` may allocate, view and
query tensors, and launch Triton kernels, but not compute with PyTorch.

A small taint analysis decides what is tensor data. Values are tainted `TENSOR` when they come from
forward's parameters (unless annotated `int`/`float`/`bool`/`str` or defaulting to such a constant),
from torch calls returning tensors, from tensor-valued `self.<attr>` (parameters, buffers) or from
tainted expressions; `LAYER` marks torch callables (an `nn.Linear` attribute, `torch.relu` passed as
a value). Metadata is clean: `.shape`, `.size()`, `.stride()`, `.numel()`, `.dtype`, `.device`, `len()`.
`HOST` marks a tensor built by `torch.tensor`/`torch.as_tensor` from clean values (`torch.tensor(x.shape)`):
computing on it is shape arithmetic, not the task's, so only `TENSOR` is checked; once such a tensor is
handed to a kernel launch, a user function or any other call that could write into it, or is written
with tensor data, it becomes `TENSOR`. A Triton kernel's own methods (`kernel.warmup(...)`) return a
compiled-kernel handle, not tensor data.
Helper parameters take the union of their call sites' argument taints (to a fixed point); a function
passed as a value gets tainted parameters, a launch-grid function clean ones.

Then (`compute_rules.check_compute`), in every reachable host function, these are violations: calling a torch function outside
`torch_allowlist.yaml` (plus `allow_torch`), a tensor method outside it or a dtype cast, calling a
`LAYER`, the `@` operator, arithmetic/comparison/augmented assignment on tensors, indexed writes into
a tensor or tensor-indexed reads, and math/numpy/operator/builtin reductions on tensor data.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from atrl.harness.static.common import matches
from atrl.harness.static.forbidden import forbidden_rule
from atrl.harness.static.graph import FunctionNode, ModuleIndex, Reach, _own_nodes

TENSOR, LAYER, HOST = 1, 2, 4
RULE = "static:pytorch-compute"
INSTEAD = "compute it in a Triton kernel (only allocation, views and shape queries may use torch)"

# Methods that put values into a Python container (list, dict, set, deque)
# (not `add`: a tensor has `.add()`, which computes)
CONTAINER_ADDS = frozenset({"append", "extend", "insert", "update", "setdefault", "appendleft", "extendleft"})
NON_TENSOR_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "layout", "requires_grad",
                              "is_leaf", "names", "itemsize", "nbytes"})  # fmt: skip
LAYER_DATA_ATTRS = ("weight", "bias", "running_mean", "running_var", "in_proj_weight", "in_proj_bias")
LAYER_SAFE_METHODS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "children",
                                "modules", "train", "eval", "extra_repr"})  # fmt: skip
NN_CONTAINERS = frozenset({"ModuleList", "Sequential", "ModuleDict", "ParameterList", "ParameterDict"})
NN_DATA = frozenset({"Parameter", "Buffer", "UninitializedParameter"})
DTYPE_NAMES = frozenset({"float16", "half", "float32", "float", "float64", "double", "bfloat16", "int8",
                         "uint8", "int16", "short", "int32", "int", "int64", "long", "bool", "complex64",
                         "complex128", "cfloat", "cdouble", "chalf", "uint16", "uint32", "uint64",
                         "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"})  # fmt: skip
# Values under torch that are constants, not functions: memory formats, layouts, numbers.
TORCH_CONSTANTS = frozenset({"contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
                             "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc",
                             "jagged", "pi", "e", "inf", "nan"})  # fmt: skip
CAST_METHODS = frozenset({"float", "half", "double", "bfloat16", "int", "long", "short", "bool", "byte",
                          "char", "type", "type_as"})  # fmt: skip
HOST_BUILTINS = frozenset({"len", "range", "isinstance", "issubclass", "hasattr", "print", "str", "repr",
                           "id", "callable", "type"})  # fmt: skip
REDUCING_BUILTINS = frozenset({"sum", "max", "min", "abs", "pow", "round", "sorted", "divmod", "any", "all"})
COMPUTE_MODULES = ("math", "numpy", "operator", "functools.reduce", "statistics", "cmath")
CLEAN_ANNOTATIONS = frozenset({"int", "float", "bool", "str"})
# Torch calls that build a tensor from host values; from clean values the result is `HOST`.
HOST_BUILDERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.scalar_tensor"})
# Calls that read a `HOST` tensor without being able to write into it.
READING_BUILTINS = HOST_BUILTINS | {"int", "float", "bool", "list", "tuple", "min", "max", "abs", "round"}


@dataclass
class Allowlist:
    """Allowed torch functions and tensor methods; each maps to whether it returns tensor data."""

    functions: dict[str, bool] = field(default_factory=dict)
    methods: dict[str, bool] = field(default_factory=dict)
    layers: set[str] = field(default_factory=set)

    def extended(self, extras: Iterable[str]) -> Allowlist:
        """A copy with a task's `allow_torch` entries added (formats in torch_allowlist.yaml)."""
        out = Allowlist(dict(self.functions), dict(self.methods), set(self.layers))
        for entry in extras:
            if entry.startswith(("Tensor.", "torch.Tensor.")):
                out.methods[entry.rsplit(".", 1)[1]] = True
            elif "." in entry:
                out.functions[entry] = True
                out.layers.add(entry)
            else:
                out.functions[f"torch.{entry}"] = True
                out.methods[entry] = True
        return out


@lru_cache(maxsize=1)
def load_allowlist() -> Allowlist:
    """The harness allowlist from `torch_allowlist.yaml` next to this module."""
    data = yaml.safe_load((Path(__file__).parent / "torch_allowlist.yaml").read_text())
    allow = Allowlist()
    for group in data["groups"].values():
        for name in group.get("functions", []):
            allow.functions[name] = bool(group["returns_tensor"])
        for name in group.get("methods", []):
            allow.methods[name] = bool(group["returns_tensor"])
    return allow


class ComputeChecker:
    """Runs the taint analysis over `reach.functions` and reports strict-policy violations."""

    def __init__(self, index: ModuleIndex, reach: Reach, allow: Allowlist) -> None:
        self.index, self.reach, self.allow = index, reach, allow
        self.aliases = index.aliases
        self.params: dict[int, dict[str, int]] = {}
        self.returns: dict[int, int] = {}
        self.envs: dict[int, dict[str, int]] = {}
        self.attr_taint: dict[tuple[str, str], int] = {}
        self._attr_stack: set[tuple[str, str]] = set()
        self._init_params()

    # --- taint -----------------------------------------------------------------------------------
    def _init_params(self) -> None:
        roots = {id(fn) for fn in self.reach.roots}
        for fn in self.reach.functions:
            tainted = id(fn) in roots or id(fn) in self.reach.passed_as_value
            if isinstance(fn, ast.Lambda) and id(fn) not in self.reach.grid_functions:
                tainted = tainted or not self._is_bound_lambda(fn)
            if id(fn) in self.reach.grid_functions:
                tainted = False
            self.params[id(fn)] = {a.arg: (TENSOR if tainted and _may_be_tensor(a, d) else 0)
                                   for a, d in _params(fn)}  # fmt: skip

    def _is_bound_lambda(self, fn: ast.Lambda) -> bool:
        return any(fn in defs for scope in self.index.bindings.values() for defs in scope.values())

    def solve(self) -> ComputeChecker:
        """Propagate taints to a fixed point; afterwards `envs[id(fn)]` holds each function's names."""
        for _ in range(12):
            before = (repr(self.params), repr(self.returns), repr(self.attr_taint))
            for fn in self.reach.functions:
                self._analyse(fn)
            if (repr(self.params), repr(self.returns), repr(self.attr_taint)) == before:
                break
        return self

    def _analyse(self, fn: FunctionNode) -> None:
        parent = self.index.parent_scope.get(id(fn))
        env = dict(self.envs.get(id(parent), {})) if parent is not None else {}
        env.update(self.params[id(fn)])
        nodes = _own_nodes(fn)
        for _ in range(6):
            before = dict(env)
            for node in nodes:
                self._bind(node, env, fn)
            if env == before:
                break
        self.envs[id(fn)] = env
        if isinstance(fn, ast.Lambda):
            result = self.taint(fn.body, env, fn)
        else:
            result = 0
            for node in nodes:
                if isinstance(node, ast.Return) and node.value is not None:
                    result |= self.taint(node.value, env, fn)
        self.returns[id(fn)] = self.returns.get(id(fn), 0) | result
        for node in nodes:  # propagate argument taints to the callees' parameters
            if isinstance(node, ast.Call):
                for callee in self._callees(node.func, fn):
                    self._pass_arguments(node, callee, env, fn)

    def _bind(self, node: ast.AST, env: dict[str, int], fn: FunctionNode) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._assign(target, node.value, env, fn)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
            self._assign(node.target, node.value, env, fn)
        elif isinstance(node, (ast.For, ast.comprehension)):
            self._assign(node.target, node.iter, env, fn, iterate=True)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self._assign(node.optional_vars, node.context_expr, env, fn)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in CONTAINER_ADDS and not self.taint(node.func.value, env, fn) & TENSOR:
            # `holder.append(x)`: the container now holds what was put in (`holder[0].relu()` computes)
            for value in [*node.args, *(k.value for k in node.keywords)]:
                self._assign(node.func.value, value, env, fn)
        if isinstance(node, ast.Call):
            self._expose_host_tensors(node, env, fn)

    def _expose_host_tensors(self, call: ast.Call, env: dict[str, int], fn: FunctionNode) -> None:
        """A `HOST` tensor that a call could write into (a launch, a user function, an unknown call,
        a method of its own given tensor data) holds tensor data from then on."""
        func = call.func
        name = self.aliases.qualname(func)
        if isinstance(func, ast.Name) and func.id in READING_BUILTINS and func.id not in env:
            return
        if name is not None and matches(name, "torch"):
            written = [k.value for k in call.keywords if k.arg == "out"]
        elif isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Subscript) \
                and self.taint(func.value, env, fn) & HOST and not self._callees(func, fn):
            written = [func.value] if self._args_taint(call, env, fn) & TENSOR else []
        else:
            written = [*call.args, *(k.value for k in call.keywords)]
        for expr in written:
            for sub in ast.walk(expr):
                if isinstance(sub, ast.Name) and env.get(sub.id, 0) & HOST:
                    env[sub.id] |= TENSOR
                elif isinstance(sub, ast.Attribute) and _is_self(sub.value) and self.taint(sub, env, fn) & HOST:
                    cls = self.index.class_of.get(id(fn))
                    if cls is not None:
                        self.attr_taint[(cls, sub.attr)] = self.attr_taint.get((cls, sub.attr), 0) | TENSOR

    def _assign(self, target: ast.AST, value: ast.expr, env: dict[str, int], fn: FunctionNode,
                iterate: bool = False) -> None:
        if iterate and isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.args:
            if value.func.id == "enumerate" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
                self._assign(target.elts[1], value.args[0], env, fn, iterate=True)
                return
            if value.func.id == "zip" and isinstance(target, ast.Tuple) and len(target.elts) == len(value.args):
                for elt, arg in zip(target.elts, value.args, strict=True):
                    self._assign(elt, arg, env, fn, iterate=True)
                return
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts) and not iterate:
            for elt, sub in zip(target.elts, value.elts, strict=True):
                self._assign(elt, sub, env, fn)
            return
        taint = self.taint(value, env, fn)
        for name in ast.walk(target):
            if isinstance(name, ast.Name):
                env[name.id] = env.get(name.id, 0) | taint
            elif isinstance(name, ast.Attribute) and _is_self(name.value):
                cls = self.index.class_of.get(id(fn))
                if cls is not None:
                    key = (cls, name.attr)
                    self.attr_taint[key] = self.attr_taint.get(key, 0) | taint

    def _pass_arguments(self, call: ast.Call, callee: FunctionNode, env: dict[str, int], fn: FunctionNode) -> None:
        params = self.params.setdefault(id(callee), {})
        names = [a.arg for a, _ in _params(callee)]  # without `self`
        for name, arg in zip(names, call.args, strict=False):
            params[name] = params.get(name, 0) | self.taint(arg, env, fn)
        for keyword in call.keywords:
            if keyword.arg in params:
                params[keyword.arg] |= self.taint(keyword.value, env, fn)

    def _callees(self, func: ast.expr, fn: FunctionNode) -> list[FunctionNode]:
        if isinstance(func, ast.Name):
            return [d for d in self.index.resolve(func, fn) if id(d) not in self.index.kernels]
        if isinstance(func, ast.Attribute) and _is_self(func.value):
            cls = self.index.class_of.get(id(fn))
            method = self.index.method(cls, func.attr) if cls else None
            return [method] if method is not None else []
        if isinstance(func, ast.Attribute) and func.attr != "__init__" and not self._super_of_torch_layer(func.value, fn) \
                and not self.taint(func.value, self.envs.get(id(fn), {}), fn) & TENSOR:
            # `obj.m(...)` on a non-tensor: any user method named m (a tensor's `.sum()` stays a tensor op)
            return [m[func.attr] for m in self.index.methods.values() if func.attr in m]
        return []

    def _super_of_torch_layer(self, expr: ast.expr, fn: FunctionNode) -> bool:
        """`super()` inside a class deriving from a torch.nn layer (not nn.Module): its methods compute."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "super"):
            return False
        cls = self.index.class_of.get(id(fn))
        node = self.index.classes.get(cls) if cls else None
        for base in node.bases if node is not None else []:
            name = self.aliases.qualname(base)
            if name is not None and matches(name, "torch.nn") and name.split(".")[-1] != "Module":
                return True
        return False

    def taint(self, expr: ast.expr, env: dict[str, int], fn: FunctionNode) -> int:
        """TENSOR/LAYER bits of an expression's value."""
        if isinstance(expr, ast.Name):
            if expr.id in env:
                return env[expr.id]
            name = self.aliases.qualname(expr)
            callable_ = name and expr.id not in self.aliases.modules and self._torch_callable(name)
            return LAYER if callable_ else 0
        if isinstance(expr, ast.Attribute):
            name = self.aliases.qualname(expr)
            if name is not None:
                return LAYER if self._torch_callable(name) and not self.aliases.is_module_object(expr) else 0
            if _is_self(expr.value):
                return self._self_attr(expr.attr, fn)
            base = self.taint(expr.value, env, fn)
            if base & LAYER:
                return TENSOR if expr.attr.startswith(LAYER_DATA_ATTRS) else 0
            return 0 if expr.attr in NON_TENSOR_ATTRS else base
        if isinstance(expr, ast.Call):
            return self._call_taint(expr, env, fn)
        if isinstance(expr, (ast.Subscript, ast.Starred, ast.NamedExpr)):
            return self.taint(expr.value, env, fn)
        if isinstance(expr, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.IfExp, ast.Tuple, ast.List, ast.Set,
                             ast.Dict, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            children = [c for c in ast.iter_child_nodes(expr) if isinstance(c, ast.expr)]
            if isinstance(expr, ast.IfExp):
                children = [expr.body, expr.orelse]
            bits = 0
            for child in children:
                bits |= self.taint(child, env, fn)
            if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
                bits |= self.taint(expr.elt, env, fn)
            return bits & (TENSOR | HOST) if isinstance(expr, (ast.BinOp, ast.UnaryOp)) else bits
        return 0

    def _call_taint(self, call: ast.Call, env: dict[str, int], fn: FunctionNode) -> int:
        func = call.func
        if isinstance(func, ast.Subscript):
            return 0  # a kernel launch
        callees = self._callees(func, fn)
        if callees:
            return max(self.returns.get(id(c), 0) for c in callees)
        if isinstance(func, ast.Attribute) and self._is_kernel(func.value, fn):
            return 0  # `kernel.warmup(...)`: a compiled-kernel handle
        name = self.aliases.qualname(func)
        args = self._args_taint(call, env, fn)
        if name is not None and matches(name, "torch"):
            if on_host_values(name, args):
                return HOST
            last = name.split(".")[-1]
            if matches(name, "torch.nn") and last in NN_CONTAINERS:
                return self._args_taint(call, env, fn)
            if matches(name, "torch.nn") and last in NN_DATA:
                return TENSOR
            if matches(name, "torch.nn") and last[:1].isupper():
                return 0 if last == "Identity" else LAYER
            return TENSOR if self.allow.functions.get(name, True) else 0
        if name is not None or (isinstance(func, ast.Name) and func.id in self.index.classes):
            if isinstance(func, ast.Name) and func.id in HOST_BUILTINS:
                return 0
            return self._args_taint(call, env, fn) & TENSOR
        if isinstance(func, ast.Attribute):
            base = self.taint(func.value, env, fn)
            if base & HOST and not base & (TENSOR | LAYER):
                return 0 if func.attr in ("item", "tolist") else HOST | (args & TENSOR)
            if base & TENSOR and func.attr in self.allow.methods and not self.allow.methods[func.attr]:
                return 0
            if base:
                return TENSOR
        if isinstance(func, ast.Name) and func.id in HOST_BUILTINS:
            return 0
        return self._args_taint(call, env, fn) & TENSOR

    def _is_kernel(self, expr: ast.expr, fn: FunctionNode) -> bool:
        found = self.index.resolve(expr, fn)
        return bool(found) and all(id(d) in self.index.kernels for d in found)

    def _args_taint(self, call: ast.Call, env: dict[str, int], fn: FunctionNode) -> int:
        bits = 0
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            bits |= self.taint(arg, env, fn)
        return bits

    def _self_attr(self, attr: str, fn: FunctionNode) -> int:
        cls = self.index.class_of.get(id(fn))
        if cls is None or self.index.method(cls, attr) is not None or (cls, attr) in self._attr_stack:
            return 0
        bits = self.attr_taint.get((cls, attr), 0)
        self._attr_stack.add((cls, attr))  # `self.x = self.x + 1` must not recurse forever
        for value in self.index.attr_values(cls, attr):
            bits |= self.taint(value, {}, fn)
        self._attr_stack.discard((cls, attr))
        for node in _register_calls(self.index, cls):
            if node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == attr:
                bits |= TENSOR
        return bits

    def _layer_names(self, attr: str, fn: FunctionNode) -> set[str]:
        cls = self.index.class_of.get(id(fn))
        names: set[str] = set()
        for value in self.index.attr_values(cls, attr) if cls else []:
            callees = [sub.func for sub in ast.walk(value) if isinstance(sub, ast.Call)]
            for sub in [value, *callees]:
                name = self.aliases.qualname(sub)
                if name and matches(name, "torch") and name.split(".")[-1] not in NN_CONTAINERS:
                    names.add(name)
        return names

    def _torch_callable(self, name: str) -> bool:
        """A torch compute function named as a value (`torch.relu`, `F.gelu`), not a dtype or class."""
        if not matches(name, "torch") or name in self.allow.functions or forbidden_rule(name):
            return False
        last = name.split(".")[-1]
        return last[:1].islower() and last not in DTYPE_NAMES and last not in TORCH_CONSTANTS \
            and name.count(".") >= 1 and not name.startswith(("torch.cuda.", "torch.version"))


def on_host_values(name: str, args_taint: int) -> bool:
    """Whether the torch call `name` builds a tensor from, or computes on, host values only: a
    `HOST_BUILDERS` call or any call on `HOST` tensors, with no tensor data or layer among its
    arguments (`torch.prod(torch.tensor(x.shape))`)."""
    return not args_taint & (TENSOR | LAYER) and bool(args_taint & HOST or name in HOST_BUILDERS)


def _is_self(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Name) and expr.id == "self"


def _params(fn: FunctionNode) -> list[tuple[ast.arg, ast.expr | None]]:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = list(zip(positional, defaults, strict=True))
    out += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    out += [(a, None) for a in (args.vararg, args.kwarg) if a is not None]
    if out and out[0][0].arg == "self" and not isinstance(fn, ast.Lambda):
        out = out[1:]
    return out


def _may_be_tensor(arg: ast.arg, default: ast.expr | None) -> bool:
    if arg.annotation is not None and ast.unparse(arg.annotation) in CLEAN_ANNOTATIONS:
        return False
    if isinstance(default, ast.Constant) and default.value is not None:
        return False
    return True


def _register_calls(index: ModuleIndex, cls: str) -> list[ast.Call]:
    return [n for method in index.methods.get(cls, {}).values() for n in ast.walk(method)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("register_buffer", "register_parameter")]  # fmt: skip

