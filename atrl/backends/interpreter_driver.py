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
"""

from __future__ import annotations

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
