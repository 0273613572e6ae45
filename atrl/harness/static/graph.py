"""Structure of a candidate: its functions, Triton kernels, classes, and what `ModelNew.forward` reaches.

`ModuleIndex(tree, aliases)` indexes every function (defs and lambdas), which of them are `@triton.jit`
kernels (also under `@triton.autotune`/`@triton.heuristics` stacks, or `k = triton.jit(fn)`), the
user classes and their methods, and the values assigned to `self.<attr>` in each class.

`reach(index)` follows the call graph from `ModelNew.forward` (and `__call__` if defined): references
to functions (called or passed as values), `self.<method>` and `self.<attr>` bound to functions or
kernels, methods of user classes called on any object (matched by name), and the `forward` of every
user class ModelNew or reachable code refers to (sub-modules; a base class named only to call its
constructor, `Base.__init__(self)`, is not one). Names resolve through the enclosing scopes, where a
local variable hides a function of the same name. It records every launch `k[grid](...)` of a kernel
on the way. Host code only: kernel bodies are never entered.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from atrl.harness.static.common import Aliases, matches

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_FUNCTION_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _is_jit(expr: ast.expr, aliases: Aliases) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    name = aliases.qualname(target)
    return name is not None and matches(name, "triton") and name.split(".")[-1] == "jit"


class ModuleIndex:
    """Functions, kernels, classes and name bindings of one candidate module (see module docstring)."""

    def __init__(self, tree: ast.Module, aliases: Aliases) -> None:
        self.tree = tree
        self.aliases = aliases
        self.parent_scope: dict[int, FunctionNode | None] = {}  # id(function) -> enclosing function
        self.class_of: dict[int, str] = {}  # id(function) -> user class it is (nested in) a method of
        self.bindings: dict[int | None, dict[str, list[FunctionNode]]] = {None: {}}  # scope -> name -> defs
        self.kernels: set[int] = set()
        self.kernel_nodes: list[ast.FunctionDef] = []
        self.classes: dict[str, ast.ClassDef] = {}
        self.methods: dict[str, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.self_attrs: dict[str, dict[str, list[ast.expr]]] = {}
        self._variables: dict[int, set[str]] = {}
        self._index(tree, None, None)
        self._bind_aliases()

    def _index(self, node: ast.AST, scope: FunctionNode | None, cls: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                if scope is None and cls is None:
                    self.classes[child.name] = child
                    self.methods[child.name] = {}
                    self.self_attrs[child.name] = {}
                self._index(child, None, child.name if scope is None and cls is None else None)
                continue
            if isinstance(child, _FUNCTION_TYPES):
                self.parent_scope[id(child)] = scope
                owner = cls if cls is not None else (self.class_of.get(id(scope)) if scope else None)
                if owner is not None:
                    self.class_of[id(child)] = owner
                if isinstance(child, ast.Lambda):
                    pass
                elif cls is not None and scope is None:
                    self.methods[cls][child.name] = child
                else:
                    self.bindings.setdefault(id(scope) if scope else None, {}).setdefault(
                        child.name, []).append(child)
                if not isinstance(child, ast.Lambda) and any(_is_jit(d, self.aliases) for d in child.decorator_list):
                    self.kernels.add(id(child))
                    self.kernel_nodes.append(child)  # type: ignore[arg-type]
                self.bindings.setdefault(id(child), {})
                self._index(child, child, None)
                continue
            if isinstance(child, (ast.Assign, ast.AnnAssign)) and child.value is not None:
                self._record_self_attr(child, cls if scope is None else self.class_of.get(id(scope)))
            self._index(child, scope, cls)

    def _record_self_attr(self, node: ast.Assign | ast.AnnAssign, cls: str | None) -> None:
        if cls is None or cls not in self.self_attrs:
            return
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                self.self_attrs[cls].setdefault(target.attr, []).append(node.value)  # type: ignore[arg-type]

    def _bind_aliases(self) -> None:
        """`k = kernel`, `f = lambda ...` and `k = triton.jit(fn)` bind a name to function nodes."""
        for _ in range(4):
            for scope_id, scope_node in [(None, self.tree), *self._scopes()]:
                for node in _own_nodes(scope_node):
                    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                        continue
                    target = node.targets[0]
                    if not isinstance(target, ast.Name):
                        continue
                    value = node.value
                    if isinstance(value, ast.Call) and _is_jit(value, self.aliases) and value.args:
                        defs = self.resolve(value.args[0], scope_node if scope_id else None)
                        for d in defs:
                            if id(d) not in self.kernels and not isinstance(d, ast.Lambda):
                                self.kernels.add(id(d))
                                self.kernel_nodes.append(d)  # type: ignore[arg-type]
                    elif isinstance(value, ast.Lambda):
                        defs = [value]
                    else:
                        defs = self.resolve(value, scope_node if scope_id else None)
                    bound = self.bindings.setdefault(scope_id, {}).setdefault(target.id, [])
                    bound.extend(d for d in defs if all(d is not b for b in bound))

    def _scopes(self) -> list[tuple[int, FunctionNode]]:
        return [(id(n), n) for n in ast.walk(self.tree) if isinstance(n, _FUNCTION_TYPES)]

    def resolve(self, expr: ast.expr, scope: FunctionNode | None) -> list[FunctionNode]:
        """The user functions (including kernels) a `Name` can denote from `scope`, innermost first.
        A local variable of that name hides the functions of the enclosing scopes (Python makes a
        name assigned anywhere in a function local to all of it)."""
        if not isinstance(expr, ast.Name):
            return []
        current: FunctionNode | None = scope
        while True:
            found = self.bindings.get(id(current) if current is not None else None, {}).get(expr.id)
            if found:
                return found
            if current is None or expr.id in self.variables(current):
                return []
            current = self.parent_scope.get(id(current))

    def variables(self, fn: FunctionNode) -> set[str]:
        """`local_variables(fn)`, cached."""
        if id(fn) not in self._variables:
            self._variables[id(fn)] = local_variables(fn)
        return self._variables[id(fn)]

    def method(self, cls: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """`cls.name`, looked up through user-defined base classes."""
        seen: set[str] = set()
        stack = [cls]
        while stack:
            current = stack.pop(0)
            if current in seen or current not in self.classes:
                continue
            seen.add(current)
            if name in self.methods[current]:
                return self.methods[current][name]
            stack.extend(b.id for b in self.classes[current].bases if isinstance(b, ast.Name))
        return None

    def ancestors(self, cls: str) -> set[str]:
        """The user-defined classes `cls` derives from, transitively (not `cls` itself)."""
        found: set[str] = set()
        stack = [b.id for b in self.classes[cls].bases if isinstance(b, ast.Name)] if cls in self.classes else []
        while stack:
            current = stack.pop()
            if current in found or current not in self.classes or current == cls:
                continue
            found.add(current)
            stack.extend(b.id for b in self.classes[current].bases if isinstance(b, ast.Name))
        return found

    def attr_values(self, cls: str, attr: str) -> list[ast.expr]:
        """Values assigned to `self.attr` in `cls` and its user-defined bases."""
        values = list(self.self_attrs.get(cls, {}).get(attr, []))
        for base in self.classes[cls].bases if cls in self.classes else []:
            if isinstance(base, ast.Name) and base.id in self.classes and base.id != cls:
                values.extend(self.attr_values(base.id, attr))
        return values


def local_variables(fn: FunctionNode) -> set[str]:
    """Parameters and variables `fn` assigns (Python makes them local to all of `fn`), without
    comprehension variables (local to their comprehension), names declared `global`, and names
    bound in nested functions or classes."""
    args = fn.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
             if a is not None}  # fmt: skip
    if isinstance(fn, ast.Lambda):
        return names
    declared_global: set[str] = set()
    comprehension_targets: set[int] = set()
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.comprehension):
            comprehension_targets.update(id(n) for n in ast.walk(node.target))
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in comprehension_targets:
            names.add(node.id)
        elif isinstance(node, ast.Global):
            declared_global.update(node.names)
        if not isinstance(node, (*_FUNCTION_TYPES, ast.ClassDef)):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return names - declared_global


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """Nodes of a scope's body, not descending into nested functions or classes."""
    out: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, (*_FUNCTION_TYPES, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


@dataclass
class Launch:
    line: int
    kernel: str  # the kernel's name, or the expression's text for an indirect launch


@dataclass
class Reach:
    """What `ModelNew.forward` reaches: host functions (kernels excluded), launches, live classes,
    and functions referenced as values (where they may be called with anything) or as launch grids."""

    functions: list[FunctionNode] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    live_classes: set[str] = field(default_factory=set)
    passed_as_value: set[int] = field(default_factory=set)
    grid_functions: set[int] = field(default_factory=set)
    roots: list[FunctionNode] = field(default_factory=list)


def reach(index: ModuleIndex) -> Reach:
    """Follow the call graph from ModelNew's forward (see the module docstring)."""
    result = Reach()
    if "ModelNew" not in index.classes:
        return result
    seen: set[int] = set()
    worklist: list[FunctionNode] = []
    indirect: list[Launch] = []
    referenced_kernels: set[int] = set()

    def add(fn: FunctionNode) -> None:
        if id(fn) in index.kernels:
            referenced_kernels.add(id(fn))
        elif id(fn) not in seen:
            seen.add(id(fn))
            worklist.append(fn)
            result.functions.append(fn)

    def make_live(cls: str) -> None:
        if cls in result.live_classes:
            return
        result.live_classes.add(cls)
        for name in ("forward", "__call__"):
            fn = index.method(cls, name)
            if fn is not None:
                result.roots.append(fn)
                add(fn)
        bases = index.ancestors(cls)
        for method in index.methods[cls].values():  # sub-modules referenced from any method (__init__)
            nodes = _own_nodes(method)
            # `Base.__init__(self)` runs a base's constructor, like super().__init__(): no Base instance
            constructors = {id(n.value) for n in nodes if isinstance(n, ast.Attribute) and n.attr == "__init__"}
            for node in nodes:
                if isinstance(node, ast.Name) and node.id in index.classes and node.id != cls \
                        and not (node.id in bases and id(node) in constructors):
                    make_live(node.id)

    make_live("ModelNew")
    while worklist:
        fn = worklist.pop()
        cls = index.class_of.get(id(fn))
        in_grid = {id(m) for n in _own_nodes(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)
                   for m in ast.walk(n.func.slice)}  # fmt: skip
        for node in _own_nodes(fn):
            if isinstance(node, ast.Lambda):
                add(node)
                if id(node) in in_grid:
                    result.grid_functions.add(id(node))
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id in index.classes and node.id != "ModelNew":
                    make_live(node.id)
                for target in index.resolve(node, fn):
                    add(target)
                    if id(node) in in_grid:
                        result.grid_functions.add(id(target))
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                _follow_attribute(index, node, cls, add, make_live)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
                kernels = _kernels_of(index, node.func.value, fn, cls)
                if kernels:
                    result.launches.extend(Launch(node.lineno, k.name) for k in kernels)  # type: ignore[union-attr]
                elif isinstance(node.func.value, (ast.Name, ast.Attribute)):
                    indirect.append(Launch(node.lineno, ast.unparse(node.func.value)))
        for node in _own_nodes(fn):  # functions used as values other than by a call may get any argument
            if isinstance(node, ast.Call):
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    for target in index.resolve(arg, fn):
                        result.passed_as_value.add(id(target))
    if referenced_kernels:
        result.launches.extend(indirect)
    result.launches.sort(key=lambda launch: launch.line)
    return result


def _follow_attribute(index: ModuleIndex, node: ast.Attribute, cls: str | None, add, make_live) -> None:
    if isinstance(node.value, ast.Name) and node.value.id == "self" and cls is not None:
        method = index.method(cls, node.attr)
        if method is not None:
            add(method)
            return
        for value in index.attr_values(cls, node.attr):
            for sub in ast.walk(value):
                if isinstance(sub, ast.Lambda):  # `self.f = lambda t: ...` runs when forward calls self.f
                    add(sub)
                elif isinstance(sub, ast.Name):
                    for target in index.resolve(sub, None):
                        add(target)
                    if sub.id in index.classes:
                        make_live(sub.id)
        return
    for methods in index.methods.values():  # obj.m(...): any user method named m
        if node.attr in methods and node.attr != "__init__":
            add(methods[node.attr])


def _kernels_of(index: ModuleIndex, expr: ast.expr, fn: FunctionNode, cls: str | None) -> list[FunctionNode]:
    if isinstance(expr, ast.Name):
        return [d for d in index.resolve(expr, fn) if id(d) in index.kernels]
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self" and cls:
        found: list[FunctionNode] = []
        for value in index.attr_values(cls, expr.attr):
            found.extend(d for d in index.resolve(value, None) if id(d) in index.kernels)
        return found
    return []
