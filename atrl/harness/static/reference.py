"""The reference-name rule (`static:reference-access`): KernelBench semantics for definitions.

LLMs often answer with the whole file: `ModelNew` plus a copy of `Model`, `get_inputs`,
`get_init_inputs`, helpers, a test function and an `if __name__ == "__main__":` block. The harness
imports the candidate as a module of its own (its `__main__` block never runs, its names cannot
shadow the task's) and always runs the task's own reference, so such definitions are harmless and
ignored. What is rejected is *using* a reference name (`REFERENCE_NAMES`) from code that can run:

  - code that runs at import: module-level statements other than definitions and the `__main__`
    guard, class bodies, decorators, default arguments, base classes and annotations (unless
    `from __future__ import annotations` postpones them);
  - code that `ModelNew` reaches: its methods (own and inherited), what they refer to — functions,
    lambdas, kernels, `self.<method>`, `super().<method>`, any method of that name of a live class,
    the methods of every class they name — transitively; likewise every function, lambda or class
    that import-time code refers to.

A candidate's own `Model` may serve as a base class, and `Model.__init__` may run: the constructor
only builds the parameters, as the reference does (both are built under the same seed). Any other
method of a reference class that runs — an inherited or `super()` `forward`, a helper, a dunder —
is the reference's computation and is rejected under every compute policy: under `partial` nothing
else would stop it on a backend without profiler coverage. Lookups by string (`globals()["Model"]`)
are uses too. Names bound locally (parameters, assigned variables) do not refer to the reference.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from atrl.harness.static.common import Violation, is_main_guard, violation
from atrl.harness.static.forbidden import REFERENCE_NAMES
from atrl.harness.static.graph import FunctionNode, ModuleIndex

RULE = "static:reference-access"
INSTEAD = ("the harness always runs the task's own Model, get_inputs and get_init_inputs and ignores "
           "yours; compute in ModelNew with your own kernels and helpers")
CONSTRUCTOR = "__init__"
MAIN_BLOCK = "__main__ block"
_NAMESPACES = frozenset({"globals", "vars", "locals"})
_NAMESPACE_METHODS = frozenset({"get", "pop", "setdefault", "__getitem__"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_IMPORT, _MODELNEW = "code run at import", "ModelNew"
# Modes in which code is reached: the reference's constructor (and what it calls) may run,
# any other reference method may not.
_CONSTRUCTION, _COMPUTATION = 1, 2


def ignored_definitions(tree: ast.Module) -> list[str]:
    """Top-level definitions of reference names that the harness ignores, in source order, plus
    `"__main__ block"` when the module has one. A reference class that serves as a base class is
    used, not ignored."""
    bases = {b.id for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
             for b in node.bases if isinstance(b, ast.Name)}  # fmt: skip
    names: list[str] = []
    has_main = False
    for stmt in tree.body:
        if is_main_guard(stmt):
            has_main = True
            continue
        for name, is_class in _bound_names(stmt):
            if name in REFERENCE_NAMES and name not in names and not (is_class and name in bases):
                names.append(name)
    return names + [MAIN_BLOCK] if has_main else names


def reference_definition_lines(tree: ast.Module) -> set[int]:
    """The lines of the module-level definitions of reference names (the candidate's own copies)."""
    lines: set[int] = set()
    for stmt in tree.body:
        if any(name in REFERENCE_NAMES for name, _ in _bound_names(stmt)):
            lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def check_reference_use(index: ModuleIndex) -> list[Violation]:
    """Uses of reference names from code that runs at import or that ModelNew reaches (unsorted).
    `index` is built over the module without its `__main__` blocks."""
    return _ReferenceUse(index).run()


def _bound_names(stmt: ast.stmt) -> list[tuple[str, bool]]:
    """(name, is a class) for each name a module-level statement binds."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(stmt.name, isinstance(stmt, ast.ClassDef))]
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return [(n.id, False) for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


@dataclass
class _Evaluated:
    """What runs when a body runs (a module on import, a function on a call): every node except the
    bodies of nested functions — whose decorators, defaults and, unless postponed, annotations do
    run — and of `__main__` guards. Nested class bodies run. `functions` are the nested functions
    and lambdas defined on the way."""

    nodes: list[ast.AST] = field(default_factory=list)
    functions: list[FunctionNode] = field(default_factory=list)

    @classmethod
    def of(cls, roots: list[ast.AST], annotations: bool) -> _Evaluated:
        out = cls()
        stack = list(reversed(roots))
        while stack:
            node = stack.pop()
            out.nodes.append(node)
            if isinstance(node, ast.If) and is_main_guard(node):
                stack.extend(reversed([node.test, *node.orelse]))
            elif isinstance(node, _FUNCTIONS):
                out.functions.append(node)
                stack.extend(reversed(_header(node, annotations)))
            else:
                stack.extend(reversed(list(ast.iter_child_nodes(node))))
        return out


def _header(fn: FunctionNode, annotations: bool) -> list[ast.AST]:
    """The parts of a function definition evaluated where it is defined."""
    args = fn.args
    parts: list[ast.AST] = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    if not isinstance(fn, ast.Lambda):
        parts = [*fn.decorator_list, *parts]
        if annotations:
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            parts += [a.annotation for a in every if a is not None and a.annotation is not None]
            parts += [fn.returns] if fn.returns is not None else []
    return parts


def _body(fn: FunctionNode) -> list[ast.AST]:
    return [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)


class _ReferenceUse:
    """One pass over a module: reaches functions and classes from import-time code and ModelNew,
    collecting the violations of the rule (see the module docstring)."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        tree = index.tree
        self.annotations = not any(isinstance(s, ast.ImportFrom) and s.module == "__future__"
                                   and any(a.name == "annotations" for a in s.names) for s in tree.body)
        self.defined = {name for stmt in tree.body for name, _ in _bound_names(stmt)}
        self.reference_classes = {name for name in REFERENCE_NAMES if name in index.classes}
        self.allowed_names = self._allowed_reference_names(tree)
        self.docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
        self.mode: dict[int, int] = {}
        self.origin: dict[int, str] = {}
        self.worklist: list[FunctionNode] = []
        self.live: set[str] = set()
        self.attribute_sites: list[tuple[ast.AST, str, int, str]] = []  # obj.<attr>: (site, attr, mode, who)
        self.self_sites: list[tuple[ast.AST, str, str, int, str]] = []  # self.<attr>: (site, class, attr, mode, who)
        self.found: list[Violation] = []

    def run(self) -> list[Violation]:
        self._scan_import_time()
        if "ModelNew" in self.index.classes:
            self._make_live("ModelNew", _MODELNEW)
        while self.worklist:
            fn = self.worklist.pop()
            evaluated = _Evaluated.of(_body(fn), self.annotations)
            for node in evaluated.nodes:
                self._visit(node, fn, self.mode[id(fn)], self.origin[id(fn)])
            for nested in evaluated.functions:  # defined here, so callable from here
                self._reach(nested, self.mode[id(fn)], self.origin[id(fn)])
        return self.found

    # --- roots -----------------------------------------------------------------------------------
    def _scan_import_time(self) -> None:
        tree = self.index.tree
        evaluated = _Evaluated.of(list(tree.body), self.annotations)
        for node in evaluated.nodes:
            self._visit(node, None, _COMPUTATION, _IMPORT)
        for fn in evaluated.functions:
            if isinstance(fn, ast.Lambda) or self._decorated_by_user_code(fn):
                self._reach(fn, _COMPUTATION, _IMPORT)  # stored in a value, or handed to a decorator
        for node in evaluated.nodes:  # defining a subclass runs its bases' __init_subclass__
            if isinstance(node, ast.ClassDef) and node.name in self.index.classes:
                for ancestor in self._mro(node.name)[1:]:
                    hook = self.index.methods[ancestor].get("__init_subclass__")
                    if hook is not None:
                        self._reach_method(hook, _COMPUTATION, node, f"defining `{node.name}`", _IMPORT)

    def _decorated_by_user_code(self, fn: FunctionNode) -> bool:
        decorators = [] if isinstance(fn, ast.Lambda) else fn.decorator_list
        return any(isinstance(n, ast.Name) and (self.index.resolve(n, None) or n.id in self.index.classes)
                   for d in decorators for n in ast.walk(d))  # fmt: skip

    @staticmethod
    def _allowed_reference_names(tree: ast.Module) -> set[int]:
        """Names of the candidate's own reference classes used as a base class, as
        `Model.__init__`, or as the class argument of `super(Model, self)` (ids of the `Name`
        nodes). `super(Model, self)` looks past `Model` in the MRO, so it reaches none of
        `Model`'s own methods: it is how the copied `Model.__init__` calls `nn.Module.__init__`."""
        allowed: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                allowed.update(id(b) for b in node.bases if isinstance(b, ast.Name))
            elif isinstance(node, ast.Attribute) and node.attr == CONSTRUCTOR and isinstance(node.value, ast.Name):
                allowed.add(id(node.value))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super" \
                    and node.args and isinstance(node.args[0], ast.Name):
                allowed.add(id(node.args[0]))
        return allowed

    # --- reaching --------------------------------------------------------------------------------
    def _reach(self, fn: FunctionNode, mode: int, origin: str) -> None:
        if self.mode.get(id(fn), 0) >= mode:
            return
        self.mode[id(fn)] = mode
        self.origin.setdefault(id(fn), origin)
        self.worklist.append(fn)

    def _reach_method(self, fn: FunctionNode, mode: int, site: ast.AST, who: str, origin: str) -> None:
        """Reach a method; a reference class's methods other than its constructor are its computation.
        `who` names the code that runs it, for the message."""
        owner = self.index.class_of.get(id(fn))
        if owner in self.reference_classes and getattr(fn, "name", "") == CONSTRUCTOR:
            self._reach(fn, _CONSTRUCTION, origin)
            return
        if owner in self.reference_classes and mode == _COMPUTATION:
            name = getattr(fn, "name", "?")
            self.found.append(violation(RULE, site, f"{who} runs `{owner}.{name}`, the reference's own computation",
                                        INSTEAD))
        self._reach(fn, mode, origin)

    def _make_live(self, cls: str, origin: str) -> None:
        """An instance of `cls` may exist: its methods may run (a reference base only through its
        constructor, its forward/__call__ and dunders — implicitly — or by name)."""
        if cls in self.live or cls not in self.index.classes:
            return
        self.live.add(cls)
        node = self.index.classes[cls]
        for owner in self._mro(cls):
            for name, fn in self.index.methods[owner].items():
                if owner not in self.reference_classes:
                    self._reach(fn, _COMPUTATION, origin)  # overridden ones too: super() reaches them
                elif self._lookup(cls, name) is fn and (name in ("forward", "__call__") or name.startswith("__")):
                    # run implicitly on an instance (the constructor goes on as construction)
                    self._reach_method(fn, _COMPUTATION, node, f"`{cls}`, which inherits it,", origin)
        for site, attr, mode, who in list(self.attribute_sites):
            self._reach_named_method(cls, site, attr, mode, who, origin)
        for site, owner, attr, mode, who in list(self.self_sites):
            method = self._lookup(cls, attr) if owner in self._mro(cls) else None
            if method is not None:
                self._reach_method(method, mode, site, who, origin)

    def _reach_named_method(self, cls: str, site: ast.AST, attr: str, mode: int, who: str, origin: str) -> None:
        """`obj.<attr>` where obj may be an instance of `cls` or a super() proxy of one: every
        method of that name along its ancestry."""
        for owner in self._mro(cls):
            fn = self.index.methods[owner].get(attr)
            if fn is not None:
                self._reach_method(fn, mode, site, who, origin)

    def _mro(self, cls: str) -> list[str]:
        """`cls` and its user-defined ancestors, nearest first."""
        order: list[str] = []
        queue = [cls]
        while queue:
            current = queue.pop(0)
            if current in order or current not in self.index.classes:
                continue
            order.append(current)
            queue.extend(b.id for b in self.index.classes[current].bases if isinstance(b, ast.Name))
        return order

    def _lookup(self, cls: str, name: str) -> FunctionNode | None:
        for owner in self._mro(cls):
            if name in self.index.methods[owner]:
                return self.index.methods[owner][name]
        return None

    # --- one node --------------------------------------------------------------------------------
    def _visit(self, node: ast.AST, fn: FunctionNode | None, mode: int, origin: str) -> None:
        where = self._label(fn)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and not self._is_local(node.id, fn):
            self._visit_name(node, fn, mode, origin, where)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            self._visit_attribute(node, node.value, node.attr, fn, mode, origin, where)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            self._visit_attribute(node, node.args[0], node.args[1].value, fn, mode, origin, where)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier() \
                and id(node) not in self.docstrings:
            # a method named by a string (operator.methodcaller("forward", x)(super())) on any object
            self._visit_attribute(node, node, node.value, fn, mode, origin, where)
        key = _namespace_lookup(node)
        if key is not None:
            self._use(node, key, where, origin, f"`{ast.unparse(node)}` looks up `{key}`")

    def _visit_name(self, node: ast.Name, fn: FunctionNode | None, mode: int, origin: str, where: str) -> None:
        name = node.id
        if name in REFERENCE_NAMES:
            if name not in self.defined:
                self.found.append(violation(RULE, node, f"`{name}` is not defined in your code, and the task's own "
                                            f"{name} is not available to candidates",
                                            "derive ModelNew from nn.Module and compute with your own kernels"))
            elif not (name in self.reference_classes and id(node) in self.allowed_names):
                self._use(node, name, where, origin, f"`{name}` is used")
            return
        for target in self.index.resolve(node, fn):
            self._reach(target, mode, origin)
        if name in self.index.classes and id(node) not in self.allowed_names:
            self._make_live(name, origin)  # a base class is not instantiated: its subclass brings its methods

    def _visit_attribute(self, site: ast.AST, value: ast.expr, attr: str, fn: FunctionNode | None, mode: int,
                         origin: str, where: str) -> None:
        cls = self.index.class_of.get(id(fn)) if fn is not None else None
        who = where if where == _IMPORT else f"`{where}`"
        if isinstance(value, ast.Name) and value.id == "self" and cls is not None:
            self.self_sites.append((site, cls, attr, mode, who))
            holders = [d for d in self.live if cls in self._mro(d)] or [cls]
            for holder in holders:  # `self` is an instance of a live subclass: look up from there
                method = self._lookup(holder, attr)
                if method is not None:
                    self._reach_method(method, mode, site, who, origin)
            return
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super":
            start = value.args[0].id if value.args and isinstance(value.args[0], ast.Name) else cls
            for base in self.index.classes[start].bases if start in self.index.classes else []:
                method = self._lookup(base.id, attr) if isinstance(base, ast.Name) else None
                if method is not None:
                    self._reach_method(method, mode, site, who, origin)
            return
        if isinstance(value, ast.Name) and value.id in self.reference_classes and attr == CONSTRUCTOR:
            method = self._lookup(value.id, CONSTRUCTOR)
            if method is not None:
                self._reach(method, _CONSTRUCTION, origin)
            return
        # any other object may be an instance of a live class, or a super() proxy of one
        self.attribute_sites.append((site, attr, mode, who))
        for live in list(self.live):
            self._reach_named_method(live, site, attr, mode, who, origin)

    # --- helpers ---------------------------------------------------------------------------------
    def _use(self, node: ast.AST, name: str, where: str, origin: str, what: str) -> None:
        if where == _IMPORT:
            place = "at import"
        elif origin == _MODELNEW and where.startswith("ModelNew."):
            place = f"in `{where}`"
        else:
            place = f"in `{where}`, which {origin} reaches"
        self.found.append(violation(RULE, node, f"{what} {place}", INSTEAD))

    def _is_local(self, name: str, fn: FunctionNode | None) -> bool:
        while fn is not None:
            if name in self.index.variables(fn):
                return True
            fn = self.index.parent_scope.get(id(fn))
        return False

    def _label(self, fn: FunctionNode | None) -> str:
        if fn is None:
            return _IMPORT
        if isinstance(fn, ast.Lambda):
            return f"the lambda on line {fn.lineno}"
        owner = self.index.class_of.get(id(fn))
        if owner is not None and self.index.methods.get(owner, {}).get(fn.name) is fn:
            return f"{owner}.{fn.name}"
        return fn.name


def _namespace_lookup(node: ast.AST) -> str | None:
    """The reference name looked up by `globals()["Model"]`, `vars().get("Model")` and the like."""
    if isinstance(node, ast.Subscript) and _is_namespace(node.value):
        key = node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _NAMESPACE_METHODS \
            and _is_namespace(node.func.value) and node.args:
        key = node.args[0]
    else:
        return None
    if isinstance(key, ast.Constant) and key.value in REFERENCE_NAMES:
        return str(key.value)
    return None


def _is_namespace(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in _NAMESPACES
