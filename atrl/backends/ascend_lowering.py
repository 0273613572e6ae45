"""Lowering mode of the `ascend` backend: every kernel launch is first compiled by triton-ascend's
real compiler for an Ascend target, then run by triton-ascend's interpreter.

Runs inside a worker of the triton-ascend environment with `TRITON_INTERPRET=1`, so every
`@triton.jit` function is an `InterpretedFunction` and every launch goes through the interpreter's
`GridExecutor.__call__`. `install()` wraps that call: at a kernel's first launch with a given
signature, `triton.compile(ASTSource(...), target=GPUTarget("npu", TARGET_ARCH, 0))` lowers it
(frontend → TTIR → the Ascend adapter's linalg) and stops at the binary step, which needs CANN's
`bishengir-compile`; any earlier failure raises `StageFailure("compile:lowering", ...)` with the
compiler's message trimmed. A grid over the NPU's 65535-program limit is `compile:grid-limit`.

Two details of triton-ascend 3.2 shape this module:
- the interpreter patches `triton.language` in place (its builtins become interpreter calls) and
  never undoes it, so the compiler must see the language as it was: `LanguageSnapshot` records
  it before any launch and `compiler_view()` restores it around each compilation;
- the compiler needs `JITFunction`s, and the candidate's helpers are `InterpretedFunction`s:
  `as_jit_function` rebuilds each kernel with globals in which helpers are `JITFunction`s, and the
  compiler's view of the language has `JITFunction`s for its own `@jit` functions too.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from atrl.harness.stages.trace import StageFailure

TARGET_ARCH = "Ascend910B3"
MAX_PROGRAMS = 65535  # the NPU's coreDim limit (UINT16_MAX programs per launch)
BINARY_STAGE = "ConvertLinalgRToBinary"  # triton-ascend's name for linalg -> NPU binary (needs CANN)
STAGE_NAMES = {"MLIRCompile": "TTIR passes", "ConvertTritonIRToLinalgIR": "TTIR -> linalg (Ascend adapter)",
               BINARY_STAGE: "linalg -> NPU binary"}
MESSAGE_LINES = 20
_RESERVED = frozenset({"num_warps", "num_stages", "num_ctas", "enable_fp_fusion", "grid", "maxnreg", "warmup",
                       "debug", "multibuffer"})
_NOISE = re.compile(r"^(///-+\[(ERROR|INFO)\]|\[INFO\]: The compiled kernel cache|ERROR: Invalid bishengir path)")


@dataclass
class LoweringReport:
    """What lowering did in this worker: kernel name -> the last stage reached ("linalg")."""

    reached: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        names = sorted(self.reached)
        shown = ", ".join(names[:6]) + (f" (+{len(names) - 6})" if len(names) > 6 else "")
        return f"lowered to linalg for {TARGET_ARCH}: {shown or 'no kernel launched'}"


REPORT = LoweringReport()


class LanguageSnapshot:
    """The attributes of `triton.language`'s modules and of its `tensor` and `dtype` classes.
    `for_compiler`: with the language's own `@jit` functions (`tl.max`, `tl.cdiv`, ...), which are
    `InterpretedFunction`s under `TRITON_INTERPRET=1`, replaced by `JITFunction`s."""

    def __init__(self, for_compiler: bool = False, memo: dict[Any, Any] | None = None) -> None:
        self.saved = {id(o): (o, dict(vars(o))) for o in _language_objects()}
        if for_compiler:
            from triton.runtime.interpreter import InterpretedFunction

            memo = {} if memo is None else memo
            for _, attrs in self.saved.values():
                for name, value in attrs.items():
                    if isinstance(value, InterpretedFunction):
                        attrs[name] = as_jit_function(value.fn, memo)

    def restore(self) -> None:
        for obj, attrs in self.saved.values():
            current = vars(obj)
            for name, value in attrs.items():
                if current.get(name, _MISSING) is not value:
                    setattr(obj, name, value)
            for name in [n for n in current if n not in attrs]:
                delattr(obj, name)


_MISSING = object()
_ORIGINAL: LanguageSnapshot | None = None


def _language_objects() -> list[Any]:
    import triton.language as tl

    modules = [m for name, m in sorted(sys.modules.items()) if name.startswith("triton.language") and m is not None]
    return [*modules, tl.tensor, tl.dtype]


@contextmanager
def compiler_view() -> Iterator[None]:
    """`triton.language` as the compiler expects it, for the duration of the block."""
    if _ORIGINAL is None:
        raise RuntimeError("ascend lowering is not installed: call install() before any launch")
    patched = LanguageSnapshot()
    _ORIGINAL.restore()
    try:
        yield
    finally:
        patched.restore()


def _original_function(fn: Any) -> Any:
    """The Python function an interpreter-rewritten kernel came from (itself when not rewritten)."""
    from triton.runtime.interpreter import InterpretedFunction

    for original, rewritten in InterpretedFunction.rewritten_fn.items():
        if rewritten is fn:
            return original
    return fn


def as_jit_function(fn: Any, memo: dict[Any, Any] | None = None) -> Any:
    """A `JITFunction` of Python function `fn` whose globals map every `InterpretedFunction` (the
    kernel's helpers) to a `JITFunction` too, recursively."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    memo = {} if memo is None else memo
    if fn in memo:
        return memo[fn]
    scope = dict(fn.__globals__)
    copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__module__, copy.__qualname__ = fn.__module__, fn.__qualname__
    copy.__kwdefaults__, copy.__annotations__ = fn.__kwdefaults__, dict(fn.__annotations__)
    jit = memo[fn] = JITFunction(copy)
    for name, value in list(scope.items()):
        if isinstance(value, InterpretedFunction):
            scope[name] = as_jit_function(value.fn, memo)
    return jit


def launch_signature(jit: Any, fn: Any, args: tuple, kwargs: dict) -> tuple[dict[str, str], dict[str, Any]]:
    """(signature, constants) of one launch of `jit` (over Python function `fn`), as ASTSource takes them."""
    import triton.language as tl
    from triton.runtime.jit import JITFunction

    bound = inspect.signature(fn).bind(*args, **{k: v for k, v in kwargs.items() if k not in _RESERVED})
    bound.apply_defaults()
    signature: dict[str, str] = {}
    constants: dict[str, Any] = {}
    for param in jit.params:
        value = bound.arguments.get(param.name)
        if isinstance(value, tl.constexpr):
            value = value.value
        if param.is_constexpr:
            signature[param.name], constants[param.name] = "constexpr", value
        elif value is None:
            signature[param.name], constants[param.name] = "constexpr", None
        else:
            signature[param.name] = JITFunction._type_of(JITFunction._key_of(value))
    return signature, constants


def trim_compiler_message(text: str, limit: int = MESSAGE_LINES) -> str:
    """The compiler's message without triton-ascend's banners, cache paths and blank lines, and
    without MLIR's long IR dumps: at most `limit` lines, the error lines first."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip() and not _NOISE.match(line.strip())]
    errors = [line for line in lines if "error" in line.lower()]
    rest = [line for line in lines if line not in errors]
    kept = (errors + rest)[:limit] if len(lines) > limit else lines
    return "\n".join(kept) + (f"\n(... {len(lines) - limit} more lines)" if len(lines) > limit else "")


def shorten_source_excerpt(text: str, keep: int = 2) -> str:
    """A frontend error quotes the kernel from its `def` down to the failing line, then a caret line
    and the error: keep the first line, the `keep` source lines above the caret, the caret and the rest."""
    lines = text.splitlines()
    caret = next((i for i, line in enumerate(lines) if line.strip() and set(line.strip()) == {"^"}), None)
    if caret is None or caret - keep <= 1:
        return text
    return "\n".join([lines[0], "    ...", *lines[caret - keep:]])


def lower(jit: Any, signature: dict[str, str], constants: dict[str, Any]) -> str:
    """Compile for the Ascend target as far as it goes; returns the stage reached ("linalg").
    Raises StageFailure("compile:lowering") for a failure before the binary step."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.errors import MLIRCompilationError

    name = jit.fn.__name__
    try:
        with compiler_view():
            triton.compile(ASTSource(jit, signature, constants=constants), target=GPUTarget("npu", TARGET_ARCH, 0))
    except MLIRCompilationError as exc:
        if exc.stage_name == BINARY_STAGE:  # without CANN: "ASCEND_HOME_PATH is not set"
            return "linalg"
        stage = STAGE_NAMES.get(exc.stage_name or "", exc.stage_name or "MLIR")
        raise StageFailure("compile:lowering", f"triton-ascend could not lower kernel {name} ({stage}):\n"
                           f"{trim_compiler_message(exc.message)}") from None
    except Exception as exc:  # the frontend (CompilationError) or a pass raising in Python
        text = trim_compiler_message(shorten_source_excerpt(f"{type(exc).__name__}: {exc}"))
        raise StageFailure("compile:lowering", f"triton-ascend could not lower kernel {name} "
                           f"(Python AST -> TTIR):\n{text}", _frontend_line(jit, exc)) from None
    return "binary"


def _frontend_line(jit: Any, exc: Exception) -> int | None:
    """The candidate's line of a frontend error: the node's line counts from the kernel's `def`
    (the decorators are not part of the source the compiler parses)."""
    offset = getattr(getattr(exc, "node", None), "lineno", None)
    if not isinstance(offset, int):
        return None
    try:
        lines, start = inspect.getsourcelines(jit.fn)
    except (OSError, TypeError):
        return None
    def_index = next((i for i, line in enumerate(lines) if line.lstrip().startswith(("def ", "async def "))), 0)
    return start + def_index + offset - 1


def _grid_size(grid: Any, fn: Any, args: tuple, kwargs: dict) -> tuple[int, ...]:
    if callable(grid):
        bound = inspect.signature(fn).bind_partial(*args, **{k: v for k, v in kwargs.items() if k not in _RESERVED})
        bound.apply_defaults()
        grid = grid(dict(bound.arguments))
    return tuple(int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,)))


def check_grid(name: str, grid: tuple[int, ...]) -> None:
    """Raise StageFailure("compile:grid-limit") when a launch asks for more programs than the NPU runs."""
    total = 1
    for size in grid:
        total *= max(size, 0)
    if total > MAX_PROGRAMS:
        raise StageFailure("compile:grid-limit", f"kernel {name} is launched with grid {list(grid)} = {total} "
                           f"programs; an Ascend NPU runs at most {MAX_PROGRAMS} per launch (coreDim can't be "
                           "greater than UINT16_MAX): launch about as many programs as there are AI cores and "
                           "loop over the blocks inside the kernel")


def _launch_options() -> frozenset[str]:
    """Keyword arguments of a launch that are options, not kernel parameters (`triton.Config`'s)."""
    import triton

    return frozenset(triton.Config({}).all_kwargs()) | _RESERVED


def install() -> None:
    """Record `triton.language` as the compiler expects it and make every interpreted launch lower
    its kernel first. Idempotent; must run before the first launch."""
    global _ORIGINAL
    from triton.runtime.interpreter import GridExecutor

    original_call = GridExecutor.__call__
    if getattr(original_call, "_atrl_lowering", False):
        return
    import triton.language as tl

    if not tl.core.is_builtin(tl.load):  # the interpreter already rewrote the language in place
        raise RuntimeError("ascend lowering must be installed before the first interpreted kernel launch")
    jit_memo: dict[Any, Any] = {}
    _ORIGINAL = LanguageSnapshot(for_compiler=True, memo=jit_memo)
    seen: dict[tuple, str] = {}

    options = _launch_options()

    @functools.wraps(original_call)
    def call(self, *args, **kwargs):
        if kwargs.get("warmup", False):
            return original_call(self, *args, **kwargs)
        fn = _original_function(self.fn)
        # An autotuner passes every option of its Config; the interpreter strips only some of them.
        parameters = inspect.signature(fn).parameters
        kwargs = {k: v for k, v in kwargs.items() if k in parameters or k not in options}
        jit = as_jit_function(fn, jit_memo)
        check_grid(fn.__name__, _grid_size(self.grid, fn, args, kwargs))
        signature, constants = launch_signature(jit, fn, args, kwargs)
        key = (fn, tuple(sorted(signature.items())), repr(sorted(constants.items())))
        if key not in seen:
            seen[key] = REPORT.reached[fn.__name__] = lower(jit, signature, constants)
        return original_call(self, *args, **kwargs)

    call._atrl_lowering = True  # type: ignore[attr-defined]
    GridExecutor.__call__ = call
