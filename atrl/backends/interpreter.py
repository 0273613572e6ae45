"""The `interpreter` backend: Triton kernels run on the CPU through `TRITON_INTERPRET=1`.

Correctness only (stages 1–4): tasks run at their `small` preset and nothing is timed, so a
verdict from this backend never carries a speedup.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from atrl.backends.base import Backend

if TYPE_CHECKING:
    import torch


class InterpreterBackend(Backend):
    name = "interpreter"
    platform = "interpreter"
    timed = False
    default_preset = "small"

    @property
    def device(self) -> torch.device:
        import torch

        return torch.device("cpu")

    def worker_env(self) -> dict[str, str]:
        return {"TRITON_INTERPRET": "1"}

    def synchronize(self) -> None:
        """CPU work is synchronous: nothing to wait for."""

    def prepare_worker(self) -> None:
        """Make `tl.dot` round fp32 operands to TF32 where the GPU would (see `emulate_tf32_dot`),
        let scalar arguments bound loops on any NumPy (`scalar_arguments_as_loop_bounds`),
        give `@triton.autotune` a benchmarker (see `benchmark_autotune_on_cpu`), run libdevice
        calls (`atrl.backends.interpreter_libdevice`) and answer host code that asks Triton's
        driver for the device (`atrl.backends.interpreter_driver`)."""
        from atrl.backends.interpreter_driver import install_stand_in_driver, install_warmup_handles
        from atrl.backends.interpreter_libdevice import enable_libdevice

        emulate_tf32_dot()
        scalar_arguments_as_loop_bounds()
        benchmark_autotune_on_cpu()
        enable_libdevice()
        install_stand_in_driver()
        install_warmup_handles()

    def judging_context(self) -> AbstractContextManager:
        """Code written for a GPU (`.cuda()`, `device="cuda"`, `assert x.is_cuda`, as KernelBench's
        answers are) runs as it would on a GPU whose tensors are the CPU's."""
        from atrl.backends.cuda_on_cpu import CudaOnCpu

        return CudaOnCpu()

    def device_name(self) -> str:
        import platform

        return f"cpu ({platform.machine() or 'unknown'}, triton interpreter)"


def emulate_tf32_dot() -> None:
    """Patch Triton's interpreter so `tl.dot` with `input_precision="tf32"` (Triton's default for
    fp32 operands) rounds its fp32 operands to TF32's 10-bit mantissa, as the tensor cores do.
    The stock interpreter multiplies in full fp32 whatever the precision, so a kernel that loses
    precision on the GPU would pass here. `tf32x3` and `ieee` stay exact. Idempotent."""
    import numpy as np
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    original = builder.create_dot
    if getattr(original, "_atrl_tf32", False):
        return
    tf32 = interpreter._ir.INPUT_PRECISION.TF32

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        if input_precision == tf32:
            a, b = (interpreter.TensorHandle(interpreter._round_f32_to_tf32(t.data), t.dtype.scalar)
                    if t.data.dtype == np.float32 else t for t in (a, b))
        return original(self, a, b, d, input_precision, max_num_imprecise_acc)

    create_dot._atrl_tf32 = True  # type: ignore[attr-defined]
    builder.create_dot = create_dot


def scalar_arguments_as_loop_bounds() -> None:
    """Triton 3.6's interpreter turns a scalar kernel argument used as an index (`for k in range(0,
    K, BLOCK)`) into an int with `int(array)` of a one-element, one-dimensional array; NumPy 2.5
    refuses that conversion ("only 0-dimensional arrays can be converted to Python scalars"), so
    every kernel that loops to a scalar argument failed to run there. Triton 3.9 squeezes the array
    first; do the same on any version. Idempotent."""
    from triton.runtime import interpreter

    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_atrl_squeeze", False):
        return

    def index(self) -> int:
        return int(self.handle.data.squeeze())

    def patch_lang_tensor(tensor, *scope):
        original(tensor, *scope)
        if scope:  # Triton >= 3.6 restores what a scope patched after each launch
            scope[0].set_attr(tensor, "__index__", index)
        else:
            tensor.__index__ = index

    patch_lang_tensor._atrl_squeeze = True  # type: ignore[attr-defined]
    interpreter._patch_lang_tensor = patch_lang_tensor


def cpu_bench(kernel_call, quantiles=None, **_):
    """One call of `kernel_call`, timed by the host clock (ms); `quantiles` get that one value."""
    import time

    start = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - start) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


def benchmark_autotune_on_cpu() -> None:
    """`@triton.autotune` with several configs asks the active GPU driver for a benchmarker, and
    the interpreter has none ("0 active drivers"), so a correct autotuned kernel would fail to
    compile here. Give the autotuner a CPU benchmarker: each config runs once, timed by the host
    clock (ms), so a config that fails still fails and the choice stays deterministic enough."""
    from triton.runtime.autotuner import Autotuner

    current = Autotuner.__dict__.get("do_bench")
    if isinstance(current, property) and getattr(current.fget, "_atrl_cpu", False):
        return

    def do_bench(self):
        return self._do_bench if self._do_bench is not None else cpu_bench

    bench = property(do_bench)
    bench.fget._atrl_cpu = True  # type: ignore[attr-defined]
    Autotuner.do_bench = bench
