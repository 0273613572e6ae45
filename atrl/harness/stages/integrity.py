"""The judge's own world, checked after candidate code runs (`correctness:tampering`).

The candidate runs in the judging process, so a Python-level patch of what the judge relies on —
torch's functions (`torch.isclose`), the Tensor and Module classes, builtins, the clock, the
task's module and reference class, Triton's launch paths, the harness's own modules — or a global
module hook, torch-function/dispatch mode, tracer or import hook would change how its output is
judged rather than what it computes. The static checks refuse the spellings they know; this
catches the effect whatever the spelling: `JudgeWorld.snapshot()` is taken before the candidate
is imported, and `check()` compares after each call into candidate code and before the output is
compared, naming the first thing that changed.

What is compared: the binding of every name in the guarded namespaces (modules and classes, by
identity; a Python function also by its code, defaults and closure, so a swapped `__code__`
counts; a dict, list or set of the harness, the task or the options also by its items, so a
tolerance table loosened in place counts), the hook registries and mode stacks by length and content, and `sys.modules` for the
guarded modules. A change made and undone inside one call is not seen; a patch that must be in
place when the judge compares is.
"""

from __future__ import annotations

import gc
import sys
import threading
import types
from collections.abc import Iterable
from dataclasses import dataclass, field

import torch
import torch.nn.modules.module as nn_module

from atrl.harness.stages.trace import StageFailure

# modules outside the harness whose bindings the judge's checks and clocks call through
_LIBRARY_MODULES = (
    "torch", "torch.nn.functional", "torch.testing", "torch.cuda", "torch.nn.modules.module", "torch._tensor",
    "torch.overrides", "torch.utils._python_dispatch", "torch.autograd", "torch.profiler", "builtins", "math",
    "statistics", "time", "functools", "operator", "triton", "triton.runtime.jit", "triton.runtime.autotuner",
    "triton.runtime.interpreter", "triton.testing",
)
_GLOBAL_HOOKS = (
    "_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks", "_global_backward_pre_hooks",
    "_global_forward_hooks_always_called", "_global_forward_hooks_with_kwargs", "_global_module_registration_hooks",
    "_global_parameter_registration_hooks", "_global_buffer_registration_hooks",
)
_EMPTY_CELL = object()
_CONTAINERS = (dict, list, set)
# the judge's running state, changed by the judge itself as it works (as is a module's warnings
# registry): only their bindings are guarded
_RUNNING_STATE = frozenset({
    "atrl.harness.stages.launch_hook._counts", "atrl.harness.stages.launch_hook._observers",
    "atrl.harness.stages.provenance._recording", "atrl.harness.stages.compare._fused_failure",
    "atrl.harness.trial_seed._process", "atrl.cli._state",
})


def _fingerprint(value: object, contents: bool = False) -> tuple:
    """The value, and for a Python function (bare or wrapped) what a call would run: its code,
    defaults and closure; with `contents` (a dict, list or set), its items too (a tolerance table
    changed in place keeps its binding). Held, not just their ids, so that no freed object's
    address is reused."""
    if contents:
        items = (*value.keys(), _EMPTY_CELL, *value.values()) if isinstance(value, dict) else tuple(value)
        return (value, len(value), *items)
    function = value
    if isinstance(value, (classmethod, staticmethod)):
        function = value.__func__
    elif isinstance(value, property):
        function = value.fget
    if isinstance(function, types.FunctionType):
        cells = (c.cell_contents if _filled(c) else _EMPTY_CELL for c in function.__closure__ or ())
        return (value, function.__code__, function.__defaults__, function.__kwdefaults__, *cells)
    return (value,)


def _same(a: tuple, b: tuple) -> bool:
    """Element by element identity (`==` would call the candidate's `__eq__`)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):  # noqa: B905 (same length)
        if x is not y:
            return False
    return True


def _library_wrapper(value: object, saved: tuple) -> bool:
    """torch._dynamo, when first imported, wraps some torch functions (`torch.manual_seed`) in
    `torch._disable_dynamo`: a wrapper around the very function saved, which behaves as it does."""
    code = getattr(value, "__code__", None)
    if code is None or not code.co_filename.replace("\\", "/").endswith("torch/_compile.py"):
        return False
    if getattr(value, "__wrapped__", None) is not saved[0]:
        return False
    contents = [c.cell_contents for c in value.__closure__ or () if _filled(c)]
    return all(c is saved[0] for c in contents if callable(c))


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def _guarded_modules() -> dict[str, types.ModuleType]:
    names = [n for n in sys.modules if n == "atrl" or n.startswith("atrl.")] + list(_LIBRARY_MODULES)
    return {n: sys.modules[n] for n in names if isinstance(sys.modules.get(n), types.ModuleType)}


def _own_classes(module: types.ModuleType) -> Iterable[type]:
    for value in list(vars(module).values()):
        if isinstance(value, type) and value.__module__ == module.__name__:
            yield value


def _hook_state() -> dict[str, tuple]:
    state: dict[str, tuple] = {}
    for name in _GLOBAL_HOOKS:
        registry = getattr(nn_module, name, None)
        if registry is not None:
            state[f"torch.nn.modules.module.{name}"] = tuple(registry.values())
    state["the torch-function mode stack"] = (torch._C._len_torch_function_stack(),)
    state["the torch-dispatch mode stack"] = (torch._C._len_torch_dispatch_stack(),)
    state["sys.settrace"] = (sys.gettrace(),)
    state["sys.setprofile"] = (sys.getprofile(),)
    state["threading.settrace"] = (getattr(threading, "_trace_hook", None),)
    state["threading.setprofile"] = (getattr(threading, "_profile_hook", None),)
    state["sys.meta_path"] = tuple(sys.meta_path)
    state["sys.path_hooks"] = tuple(sys.path_hooks)
    state["gc.callbacks"] = tuple(gc.callbacks)
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        state["sys.monitoring"] = tuple(monitoring.get_tool(i) for i in range(6))
    return state


@dataclass
class JudgeWorld:
    """A snapshot of what the judge relies on, and `check` against it."""

    # label -> (the namespace, name -> (its fingerprint, whether the items count), "class" | "module" |
    # "library"): a module gains a name legitimately when one of its submodules is imported, a class
    # (or a guarded object's attributes) never does; of a library module only the functions and
    # classes are guarded
    namespaces: dict[str, tuple[dict, dict[str, tuple[tuple, bool]], str]] = field(default_factory=dict)
    modules: dict[str, types.ModuleType] = field(default_factory=dict)
    hooks: dict[str, tuple] = field(default_factory=dict)

    @classmethod
    def snapshot(cls, task_module: types.ModuleType | None = None,
                 objects: dict[str, object] | None = None) -> JudgeWorld:
        """`objects`: label -> an object whose attributes are guarded too (the task, the options)."""
        world = cls()
        modules = _guarded_modules()
        if task_module is not None:
            modules[task_module.__name__] = task_module
        world.modules = dict(modules)
        classes: list[type] = [torch.Tensor, torch.nn.Module, torch.nn.Parameter]
        for name, module in modules.items():
            own = name == "atrl" or name.startswith("atrl.") or module is task_module
            # a library module's data (torch.cuda's lazy-init flags, caches) changes as it is used;
            # its functions and classes do not
            world._add(name, vars(module), "module" if own else "library")
            if own:
                classes.extend(_own_classes(module))
        for klass in classes:
            world._add(f"{klass.__module__}.{klass.__qualname__}", vars(klass), "class")
        for label, value in (objects or {}).items():
            if hasattr(value, "__dict__"):
                world._add(label, vars(value), "class")
        world.hooks = _hook_state()
        return world

    def _add(self, label: str, namespace: dict, kind: str) -> None:
        if label not in self.namespaces:
            own = kind != "library"
            saved = {}
            for key, value in list(namespace.items()):
                if own or _guarded(value):
                    contents = (own and isinstance(value, _CONTAINERS) and key != "__warningregistry__"
                                and f"{label}.{key}" not in _RUNNING_STATE)
                    saved[key] = (_fingerprint(value, contents), contents)
            self.namespaces[label] = (namespace, saved, kind)

    def changed(self) -> str | None:
        """The first guarded thing that differs from the snapshot, named; None when none does."""
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                return f"sys.modules[{name!r}]"
        for label, (namespace, saved, kind) in self.namespaces.items():
            for key, (print_, contents) in saved.items():
                if key not in namespace:
                    return f"{label}.{key}"
                value = namespace[key]
                if value is print_[0]:  # the saved object: only then are its code or contents read
                    if _same(_fingerprint(value, contents), print_):
                        continue
                elif _library_wrapper(value, print_):
                    continue
                return f"{label}.{key}"
            # every saved name is still there, so a longer namespace gained names; a library module's
            # new names are never looked up by the judge, which calls only the saved ones
            if kind != "library" and len(namespace) != len(saved):
                for key in list(namespace):
                    if key not in saved and _counts_as_added(kind, key, namespace[key]):
                        return f"{label}.{key}"
        now = _hook_state()
        for label, saved in self.hooks.items():
            if not _same(now.get(label, ()), saved):
                return label
        return None

    def check(self, where: str) -> None:
        """Raise `correctness:tampering` when candidate code changed the judge's world."""
        what = self.changed()
        if what is not None:
            raise StageFailure(
                "correctness:tampering",
                f"{where}, the candidate's code changed `{what}`, which the judge itself uses: a kernel must "
                "compute its output, not patch, hook or trace torch, the reference or the harness",
            )


def _guarded(value: object) -> bool:
    return callable(value) and not isinstance(value, types.ModuleType)


def _counts_as_added(kind: str, name: str, value: object) -> bool:
    """Whether a name new to a module's or class's namespace is a change: in a module, never an
    imported submodule or the warnings registry."""
    return kind == "class" or not (isinstance(value, types.ModuleType) or name == "__warningregistry__")
