"""Count Triton kernel launches, so a candidate whose kernel never runs (a decoy) is caught.

Every launch of a `@triton.jit` function goes through `run(*args, grid, warmup, ...)`: the
`JITFunction` for compiled kernels and the `InterpretedFunction` under `TRITON_INTERPRET=1`
(the same signature in Triton 3.x); `kernel[grid](...)`, `Autotuner.run` and `Heuristics.run`
all end there. Wrapping `run` on those classes counts launches whatever the candidate imported.
Interpreters whose `InterpretedFunction` has no `run` on the class (triton-ascend 3.2 sets it per
instance, and `kernel[grid]` skips it) launch through `GridExecutor.__call__`, wrapped instead.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

_counts: Counter[str] = Counter()
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
        result = original(self, *args, grid=grid, warmup=warmup, **kwargs)
        if not warmup:
            _counts[_kernel_name(self)] += 1
        return result

    run._atrl_counting = True  # type: ignore[attr-defined]
    cls.run = run


def install() -> None:
    """Wrap the launch paths of every Triton kernel class present. Idempotent."""
    global _installed
    if _installed:
        return
    from triton.runtime.jit import JITFunction

    _wrap_run(JITFunction)
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
