"""libdevice on Triton's interpreter: `libdevice.tanh(x)` and friends, computed with NumPy.

Kernels written for a GPU call libdevice for what `tl` lacks (`tanh`, `erf` under older names,
`pow`, `atan2`, ...), through `triton.language.extra.libdevice` or `tl.extra.cuda.libdevice`. The
stock interpreter runs neither: it patches only `tl` for interpretation, so such a call returns
None ("cannot convert None ... to tensor"), and its builder refuses external functions. A correct
GPU kernel would fail on the CPU judge as `compile:triton`. `enable_libdevice()` lets the
interpreter run the libdevice functions of the table below (the CUDA symbol's name without
`__nv_`, `fast_` and the fp32 suffix `f`) with the NumPy function of the same meaning, in the
argument's dtype; any other libdevice function still fails, naming itself.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable

import numpy as np

_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)
_lgamma = np.vectorize(math.lgamma)
_tgamma = np.vectorize(math.gamma)


class NotOnInterpreter(RuntimeError):
    """A libdevice function this interpreter support does not compute: the candidate's verdict
    (`compile:triton`) names it and says what to use instead."""


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def _round_half_away(x: np.ndarray) -> np.ndarray:  # C's round(): halves away from zero
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    # one argument
    "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10, x),
    "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sqrt": np.sqrt, "rsqrt": _rsqrt, "cbrt": np.cbrt, "erf": _erf, "erfc": _erfc, "lgamma": _lgamma,
    "tgamma": _tgamma, "floor": np.floor,
    "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint, "nearbyint": np.rint, "round": _round_half_away,
    "fabs": np.abs, "abs": np.abs, "llabs": np.abs, "rcp": np.reciprocal, "isnan": np.isnan, "isinf": np.isinf,
    "isfinited": np.isfinite, "finitef": np.isfinite, "signbitd": np.signbit, "signbit": np.signbit,
    # two arguments
    "pow": np.power, "powi": np.power, "atan2": np.arctan2, "hypot": np.hypot, "fmax": np.fmax,
    "fmin": np.fmin, "max": np.maximum, "min": np.minimum, "fmod": np.fmod, "copysign": np.copysign,
    "fdim": lambda x, y: np.maximum(x - y, 0), "fdiv_rn": np.divide, "ddiv_rn": np.divide,
    "div_rn": np.divide, "nextafter": np.nextafter, "ldexp": np.ldexp,
    # three arguments
    "fma": lambda x, y, z: x * y + z,
}


def numpy_function(symbol: str) -> Callable[..., np.ndarray] | None:
    """The NumPy function for a libdevice symbol ("__nv_tanhf" -> np.tanh), or None."""
    name = symbol.removeprefix("__nv_").removeprefix("fast_")
    if name in FUNCTIONS:
        return FUNCTIONS[name]
    if name.endswith("f") and name[:-1] in FUNCTIONS:
        return FUNCTIONS[name[:-1]]
    return None


def _create_extern_elementwise(self, libName, libPath, symbol, argList, retType, isPure):
    from triton.runtime.interpreter import TensorHandle, _get_np_dtype

    function = numpy_function(symbol)
    if function is None:
        raise NotOnInterpreter(f"libdevice's {symbol.removeprefix('__nv_')} does not run on the interpreter "
                               "(it runs on a GPU): compute it with tl.* operations")
    values = [a.data if isinstance(a, TensorHandle) else a for a in argList]
    scalar = getattr(retType, "scalar", retType)
    with np.errstate(all="ignore"):  # inf and nan come out as on the GPU, without warnings
        out = np.asarray(function(*values)).astype(_get_np_dtype(scalar))
    return TensorHandle(out, scalar)


def enable_libdevice() -> None:
    """Let Triton's interpreter run libdevice calls (see the module doc). Idempotent; a Triton
    whose interpreter lacks the patch points is left as it is."""
    from triton.runtime import interpreter

    builder, original = interpreter.InterpreterBuilder, getattr(interpreter, "_patch_lang", None)
    if original is None or not hasattr(interpreter, "_patch_attr") or getattr(original, "_atrl_libdevice", False):
        return
    try:
        from triton.language.core import is_builtin
        from triton.language.extra import libdevice as generic
        from triton.language.extra.cuda import libdevice as cuda
    except ImportError:
        return
    builder.create_extern_elementwise = _create_extern_elementwise
    functions = [(name, member) for name, member in inspect.getmembers(cuda) if is_builtin(member)]

    def patch_lang(fn):
        scope = original(fn)
        for name, member in functions:
            interpreter._patch_attr(cuda, name, member, interpreter.interpreter_builder, scope)
            if hasattr(generic, name):  # the backend-neutral stubs: the CUDA implementation
                scope.set_attr(generic, name, getattr(cuda, name))
        return scope

    patch_lang._atrl_libdevice = True  # type: ignore[attr-defined]
    interpreter._patch_lang = patch_lang
