"""A stand-in Triton driver on the interpreter, for host code written from Triton's tutorials.

Triton's tutorials begin with `DEVICE = triton.runtime.driver.active.get_active_torch_device()`;
some read `driver.active.utils.get_device_properties(...)` (the SM count of a persistent grid) or
`driver.active.get_current_target()` (to pick autotune configs), and answers written from them
do the same. Without a GPU no Triton driver is active ("0 active drivers"), so such a file failed
at import, before any kernel ran. `CpuStandInDriver` answers those questions on the interpreter:
the torch device is the CPU (where the judged tensors live), the target and the device
properties are an H100-class GPU's (the kernels are judged as GPU kernels; nothing is compiled
for that target), benchmarks use the host clock. Anything else a real driver offers is absent and
fails by its name.

Triton's fused-softmax tutorial also compiles ahead, `kernel = softmax_kernel.warmup(...)`, reads
`kernel.n_regs` and `kernel.metadata.shared` to size a persistent grid, and launches
`kernel[grid](...)` with every parameter positional. The interpreter's `warmup` returns nothing;
`install_warmup_handles` makes it return a `CompiledKernelStandIn`: nothing compiled, so it reports
`STAND_IN_REGISTERS` registers, no spills and no shared memory, and its launch is the kernel's own.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import torch
from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase

from atrl.backends.cuda_on_cpu import STAND_IN_CAPABILITY, STAND_IN_GPU


class _Utils:
    def get_device_properties(self, device: Any = None) -> dict[str, int]:
        return dict(STAND_IN_GPU)


class CpuStandInDriver(DriverBase):
    """The driver `triton.runtime.driver.active` returns on the interpreter (see the module doc)."""

    def __init__(self) -> None:
        super().__init__()
        self.utils = _Utils()

    @classmethod
    def is_active(cls) -> bool:
        return True

    def map_python_to_cpp_type(self, ty: str) -> str:
        return ty

    def get_current_target(self) -> GPUTarget:
        major, minor = STAND_IN_CAPABILITY
        return GPUTarget("cuda", 10 * major + minor, STAND_IN_GPU["warpSize"])

    def get_active_torch_device(self) -> torch.device:
        return torch.device("cpu")

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: int) -> None:
        return None

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_benchmarker(self):
        from atrl.backends.interpreter import cpu_bench

        return cpu_bench


def install_stand_in_driver() -> None:
    """Make `triton.runtime.driver.active` the stand-in when no real driver is active (a CPU-only
    machine). Idempotent; a machine with a GPU keeps its driver."""
    from triton.runtime import driver

    if isinstance(getattr(driver, "_active", None), CpuStandInDriver):
        return
    try:
        driver.active  # noqa: B018 - creates the real driver when there is one
    except RuntimeError:
        driver.set_active(CpuStandInDriver())


# What a compiled kernel reports on the stand-in GPU, where nothing is compiled: a modest register
# count (an H100 gives each thread up to 255) and no spills; the tutorial sizes its grid from it.
STAND_IN_REGISTERS = 32


class CompiledKernelStandIn:
    """What `kernel.warmup(...)` returns on the interpreter: the attributes Triton's tutorials read
    from a `CompiledKernel`, and `handle[grid](*args)` launching the kernel itself (constexpr
    values given to `warmup` fill the parameters the launch leaves out)."""

    def __init__(self, kernel: Any, options: dict[str, Any]) -> None:
        self.kernel = kernel
        self.constants = {k: v for k, v in options.items() if k in kernel.arg_names}
        self.n_regs, self.n_spills, self.n_max_threads = STAND_IN_REGISTERS, 0, 1024
        self.metadata = SimpleNamespace(shared=0, num_warps=options.get("num_warps", 4),
                                        num_stages=options.get("num_stages", 3), num_ctas=1,
                                        name=kernel.__name__)

    def _init_handles(self) -> None:
        """Loading the binary onto the device: nothing to load on the interpreter."""

    def __getitem__(self, grid: Any):
        def launch(*args: Any, **kwargs: Any) -> Any:
            rest = {name: self.constants[name] for name in self.kernel.arg_names[len(args):]
                    if name in self.constants and name not in kwargs}
            return self.kernel.run(*args, grid=grid, warmup=False, **rest, **kwargs)

        return launch


def install_warmup_handles() -> None:
    """Make the interpreter's `kernel.warmup(...)` return a `CompiledKernelStandIn`. Idempotent."""
    from triton.runtime.interpreter import InterpretedFunction

    original = InterpretedFunction.run
    if getattr(original, "_atrl_warmup_handle", False):
        return

    def run(self, *args, grid, warmup, **kwargs):
        if warmup:
            return CompiledKernelStandIn(self, kwargs)
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    run._atrl_warmup_handle = True  # type: ignore[attr-defined]
    InterpretedFunction.run = run
