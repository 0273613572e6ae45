"""Device backends: `cuda` (real GPU, timed) and `interpreter` (CPU, `TRITON_INTERPRET=1`).

`resolve_backend(name)` is the one way to get a backend; "auto" picks cuda when a GPU is visible.
"""

from __future__ import annotations

import sys
from pathlib import Path

from atrl.backends.base import Backend
from atrl.errors import UsageError

BACKENDS = ("auto", "cuda", "interpreter")

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
    """The backend called `name` ("auto", "cuda" or "interpreter").
    Raises `UsageError` for an unknown name, or for "cuda" where no GPU is visible."""
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
    raise UsageError(f"unknown backend {name!r}", f"choose one of {', '.join(BACKENDS)}")


__all__ = ["BACKENDS", "Backend", "resolve_backend"]
