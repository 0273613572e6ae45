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
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager

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


def _wrap_run(cls: type) -> None:
    original = cls.run
    if getattr(original, "_atrl_counting", False):
        return

    @functools.wraps(original)
    def run(self, *args, grid, warmup, **kwargs):
        if warmup:
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
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
        with _observed(self.fn, args, kwargs):
            result = original(self, *args, **kwargs)
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
