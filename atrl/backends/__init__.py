"""Device backends: `cuda` (real GPU, timed) and `interpreter` (CPU, `TRITON_INTERPRET=1`).

`resolve_backend(name)` is the one way to get a backend; "auto" picks cuda when a GPU is visible.
"""

from __future__ import annotations

from atrl.backends.base import Backend
from atrl.errors import UsageError

BACKENDS = ("auto", "cuda", "interpreter")


def resolve_backend(name: str = "auto") -> Backend:
    """The backend called `name` ("auto", "cuda" or "interpreter").
    Raises `UsageError` for an unknown name, or for "cuda" where no GPU is visible."""
    import torch

    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "interpreter"
    if name == "interpreter":
        from atrl.backends.interpreter import InterpreterBackend

        return InterpreterBackend()
    if name == "cuda":
        if not torch.cuda.is_available():
            raise UsageError("no CUDA GPU is visible", "use --backend interpreter or run on a GPU machine")
        from atrl.backends.cuda import CudaBackend

        return CudaBackend()
    raise UsageError(f"unknown backend {name!r}", f"choose one of {', '.join(BACKENDS)}")


__all__ = ["BACKENDS", "Backend", "resolve_backend"]
