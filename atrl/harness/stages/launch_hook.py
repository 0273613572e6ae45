"""Count Triton kernel launches, so a candidate whose kernel never runs (a decoy) is caught.

Every launch of a `@triton.jit` function goes through `run(*args, grid, warmup, ...)`: the
`JITFunction` for compiled kernels and the `InterpretedFunction` under `TRITON_INTERPRET=1`
(the same signature in Triton 3.x); `kernel[grid](...)`, `Autotuner.run` and `Heuristics.run`
all end there. Wrapping `run` on those classes counts launches whatever the candidate imported.
Interpreters whose `InterpretedFunction` has no `run` on the class (triton-ascend 3.2 sets it per
instance, and `kernel[grid]` skips it) launch through `GridExecutor.__call__`, wrapped instead.
Observers (`observe_launches`) are also told of each launch, with its arguments, around the launch
itself: of the outermost launch only, so an autotuned launch (its benchmark runs, its
`reset_to_zero` and `restore_value` hooks, the run of the best config) is one launch to them.

Two guards keep work from hiding inside a launch, where the provenance recorder credits what
happens to the kernel and does not record what the launcher itself runs:
- every argument must be a value Triton takes as it is (a torch tensor, a Triton wrapper or
  descriptor of one, a tuple of such values, a Python or NumPy scalar, a string, a dtype, a
  constexpr, a jitted function), checked before the launcher touches it while the recorder
  observes (the correctness trials; not in timed calls, which it would slow). Anything else (an object
  of the candidate's own class posing as a tensor) is refused: the launcher calls its methods
  (`data_ptr`, `untyped_storage`, ...), and a C-level callable there (`functools.partial` of a
  tensor method) computes with no frame of the candidate's for the recorder to see.
- while the recorder observes, a grid function may not change the data of the launch's tensors:
  it runs inside the launch, so what it wrote would count as the kernel's work (and under a
  switched-off dispatcher it would not be recorded at all).
"""

from __future__ import annotations

import functools
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager

import numpy
import torch

from atrl.harness.stages.trace import StageFailure

# An observer is called as observer(kernel_name, args, kwargs) and returns a context manager that
# is entered just before the launch and left just after it (also when the launch raises).
LaunchObserver = Callable[[str, tuple, dict], AbstractContextManager]

_counts: Counter[str] = Counter()
_observers: list[LaunchObserver] = []
_depth = 0  # launches under way (an autotuner's benchmark runs are inside its own launch)
_installed = False


def _kernel_name(kernel: object) -> str:
    fn = getattr(kernel, "fn", None)
    return getattr(fn, "__name__", None) or getattr(kernel, "__name__", type(kernel).__name__)


_PLAIN_TYPES = (type(None), bool, int, float, str, torch.dtype)
_MAX_NESTING = 8
_INSTEAD = ("Pass the torch.Tensor itself (or triton.reinterpret(tensor, dtype), or a TensorDescriptor of a "
            "tensor), and plain ints, floats, bools, strings, None or dtypes for the other arguments")


def _library_class(kind: type, package: str) -> bool:
    """Whether `package` itself defines `kind`: it is found under its name in its own module, so a
    class of the candidate's that claims the module name does not pass."""
    module = kind.__module__ if isinstance(kind.__module__, str) else ""
    return module.split(".")[0] == package and getattr(sys.modules.get(module), kind.__name__, None) is kind


def _refused(kernel: object, where: str, what: str) -> StageFailure:
    return StageFailure(
        "correctness:untracked-data",
        f"kernel `{_kernel_name(kernel)}`: argument `{where}` is {what}. Triton's launcher calls the methods of what "
        f"it is given (data_ptr, untyped_storage, ...), outside what the judge records. {_INSTEAD}")


def _collect(kernel: object, value: object, where: str, tensors: list[torch.Tensor], depth: int = 0) -> None:
    """Add the tensors in one launch argument to `tensors`; raise at a value Triton would not take as
    it is. Only `type()` and the library classes' own attributes are used: no candidate code runs."""
    kind = type(value)
    if kind in _PLAIN_TYPES or (issubclass(kind, numpy.generic) and _library_class(kind, "numpy")):
        return
    if issubclass(kind, torch.Tensor) and _library_class(kind, "torch"):
        shadowed = sorted(name for name in vars(value) if hasattr(kind, name))
        if shadowed:
            raise _refused(kernel, where, f"a tensor whose `{shadowed[0]}` is replaced on the object")
        tensors.append(value)
    elif depth < _MAX_NESTING and (kind in (tuple, list, torch.Size)
                                   or (issubclass(kind, tuple) and hasattr(kind, "_fields"))):  # a namedtuple
        items = list.__iter__(value) if kind is list else tuple.__iter__(value)
        for index, item in enumerate(items):
            _collect(kernel, item, f"{where}[{index}]", tensors, depth + 1)
    elif depth < _MAX_NESTING and _library_class(kind, "triton"):
        # a wrapper or descriptor (`base`, `shape`, `strides`) or a constexpr (`value`): what it holds too
        for name in ("base", "value", "shape", "strides"):
            if hasattr(value, name):
                _collect(kernel, getattr(value, name), f"{where}.{name}", tensors, depth + 1)
    else:
        raise _refused(kernel, where, f"a `{kind.__qualname__}` object, not a torch.Tensor or a plain value")


def _launch_tensors(kernel: object, args: tuple, kwargs: dict) -> list[torch.Tensor]:
    """The tensors among a launch's arguments, refusing any argument Triton would not take as it is."""
    names = getattr(kernel, "arg_names", None) or []
    tensors: list[torch.Tensor] = []
    for index, value in enumerate(args):
        _collect(kernel, value, names[index] if index < len(names) else f"#{index}", tensors)
    for name, value in kwargs.items():
        if name not in ("grid", "warmup"):  # a tuner's `run` gets the launch's own grid and warmup here
            _collect(kernel, value, name, tensors)
    return tensors


def _watched_grid(kernel: object, grid: Callable, tensors: list[torch.Tensor]) -> Callable:
    """`grid`, refusing the launch when calling it changed the data of one of the launch's tensors."""
    from atrl.harness.stages.provenance import fingerprint

    storages = {(t.device, t.untyped_storage().data_ptr()): t for t in tensors
                if t.device.type != "meta" and t.untyped_storage().nbytes() > 0}

    def watched(meta):
        before = {key: fingerprint(t) for key, t in storages.items()}
        result = grid(meta)
        if any(fingerprint(t) != before[key] for key, t in storages.items()):
            raise StageFailure(
                "correctness:untracked-data",
                f"kernel `{_kernel_name(kernel)}`: its grid function changed the data of a tensor passed to the "
                "kernel. The grid function runs inside the launch, so what it writes would count as the kernel's "
                "work: compute only the grid in it (a tuple of ints from sizes and meta), and compute the data in "
                "Triton kernels")
        return result

    return watched


def _wrap_run(cls: type) -> None:
    original = cls.run
    if getattr(original, "_atrl_counting", False):
        return

    @functools.wraps(original)
    def run(self, *args, grid, warmup, **kwargs):
        # checked while the recorder observes (the correctness trials), not in timed calls, where
        # the check's microseconds would count against the candidate
        tensors = _launch_tensors(self, args, kwargs) if _observers else []
        if warmup:
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        if _observers and callable(grid):
            grid = _watched_grid(self, grid, tensors)
        with _observed(self, args, kwargs):
            result = original(self, *args, grid=grid, warmup=warmup, **kwargs)
        _counts[_kernel_name(self)] += 1
        return result

    run._atrl_counting = True  # type: ignore[attr-defined]
    cls.run = run


@contextmanager
def _observed(kernel: object, args: tuple, kwargs: dict) -> Iterator[None]:
    """The observers' context around an outermost launch; nested launches only pass through."""
    global _depth
    _depth += 1
    try:
        if _depth > 1 or not _observers:
            yield
            return
        with ExitStack() as stack:
            for observer in list(_observers):
                stack.enter_context(observer(_kernel_name(kernel), args, kwargs))
            yield
    finally:
        _depth -= 1


def _wrap_tuner(cls: type) -> None:
    """Autotuner/Heuristics `run`: observed as one launch (their inner runs are counted)."""
    original = cls.run
    if getattr(original, "_atrl_observing", False):
        return

    @functools.wraps(original)
    def run(self, *args, **kwargs):
        if _observers:
            _launch_tensors(self, args, kwargs)
        with _observed(self, args, kwargs):
            return original(self, *args, **kwargs)

    run._atrl_observing = True  # type: ignore[attr-defined]
    cls.run = run


def install() -> None:
    """Wrap the launch paths of every Triton kernel class present. Idempotent."""
    global _installed
    if _installed:
        return
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    _wrap_run(JITFunction)
    _wrap_tuner(Autotuner)
    _wrap_tuner(Heuristics)
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # a Triton build without the interpreter
        InterpretedFunction = None
    if InterpretedFunction is not None and hasattr(InterpretedFunction, "run"):
        _wrap_run(InterpretedFunction)
    elif InterpretedFunction is not None:
        _wrap_grid_executor()
    _installed = True


def _wrap_grid_executor() -> None:
    from triton.runtime.interpreter import GridExecutor

    original = GridExecutor.__call__
    if getattr(original, "_atrl_counting", False):
        return

    @functools.wraps(original)
    def call(self, *args, **kwargs):
        tensors = _launch_tensors(self, args, kwargs) if _observers else []
        grid = self.grid
        if _observers and callable(grid):
            self.grid = _watched_grid(self, grid, tensors)
        try:
            with _observed(self.fn, args, kwargs):
                result = original(self, *args, **kwargs)
        finally:
            self.grid = grid
        if not kwargs.get("warmup", False):
            _counts[getattr(self.fn, "__name__", type(self.fn).__name__)] += 1
        return result

    call._atrl_counting = True  # type: ignore[attr-defined]
    GridExecutor.__call__ = call


@contextmanager
def count_launches() -> Iterator[Counter[str]]:
    """Yields a Counter (kernel name → launches) filled with the launches made inside the block."""
    install()
    seen: Counter[str] = Counter()
    before = Counter(_counts)
    try:
        yield seen
    finally:
        seen.update(_counts - before)


@contextmanager
def observe_launches(observer: LaunchObserver) -> Iterator[None]:
    """Tell `observer` of every Triton launch made inside the block."""
    install()
    _observers.append(observer)
    try:
        yield
    finally:
        _observers.remove(observer)


def jit_function_names(module: object) -> set[str]:
    """Names of the `@triton.jit` functions defined at the top level of a module (unwrapping
    autotune/heuristics decorators)."""
    from triton.runtime.jit import KernelInterface

    names = set()
    for value in vars(module).values():
        kernel = value
        while isinstance(kernel, KernelInterface) and hasattr(kernel, "fn") and isinstance(kernel.fn, KernelInterface):
            kernel = kernel.fn
        if isinstance(kernel, KernelInterface):
            names.add(_kernel_name(kernel))
    return names
