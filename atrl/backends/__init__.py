"""Device backends: `cuda` (real GPU, timed), `interpreter` (CPU, `TRITON_INTERPRET=1`) and
`ascend` (triton-ascend in its own environment: lowering + interpreter on a CPU, timed on an NPU).

`resolve_backend(name)` is the one way to get a backend; "auto" picks cuda when a GPU is visible.
"""

from __future__ import annotations

import sys
from pathlib import Path

from atrl.backends.base import Backend
from atrl.errors import UsageError

BACKENDS = ("auto", "cuda", "interpreter", "ascend")
# Backends that time candidates (`Backend.timed`), so only they can catch an attack on the timing.
# Ascend times only on an NPU (its mode decides): build the backend to know there.
TIMED_BACKENDS = frozenset({"cuda"})

# A GPU driver's device files (NVIDIA, ROCm, WSL): on Linux torch sees no GPU without one of them.
GPU_DEVICE_FILES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg")


def _gpu_visible() -> bool:
    """Whether torch sees a CUDA device. On Linux without any GPU device file the answer is no
    without importing torch (about a second of start-up, most of a cached `atrl check`)."""
    if sys.platform.startswith("linux") and not any(Path(f).exists() for f in GPU_DEVICE_FILES):
        return False
    import torch

    return torch.cuda.is_available()


def resolve_backend(name: str = "auto") -> Backend:
    """The backend called `name` ("auto", "cuda", "interpreter" or "ascend"). Raises `UsageError`
    for an unknown name, for "cuda" where no GPU is visible, for "ascend" without its environment.
    "auto" never picks ascend: NPUKernelBench runs choose it (`default_backend_for_suite`)."""
    if name == "auto":
        name = "cuda" if _gpu_visible() else "interpreter"
    if name == "interpreter":
        from atrl.backends.interpreter import InterpreterBackend

        return InterpreterBackend()
    if name == "cuda":
        if not _gpu_visible():
            raise UsageError("no CUDA GPU is visible", "use --backend interpreter or run on a GPU machine")
        from atrl.backends.cuda import CudaBackend

        return CudaBackend()
    if name == "ascend":
        from atrl.backends.ascend import AscendBackend

        return AscendBackend()
    raise UsageError(f"unknown backend {name!r}", f"choose one of {', '.join(BACKENDS)}")


# Suites written for one platform run there unless a backend is named: NPUKernelBench is Triton-Ascend's.
SUITE_BACKENDS = {"npukernelbench": "ascend"}


def default_backend_for_suite(suite: str, requested: str) -> str:
    """The backend a run of `suite` uses: `requested`, unless it is "auto" and the suite has its own."""
    return SUITE_BACKENDS.get(suite, requested) if requested == "auto" else requested


__all__ = ["BACKENDS", "SUITE_BACKENDS", "Backend", "default_backend_for_suite", "resolve_backend"]
