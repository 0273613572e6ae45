"""The `Backend` interface: what differs per device for the judge that runs inside a worker.

A backend names its platform (the knowledge base filters by it), says whether it is timed, which
size preset tasks run at by default, which environment a worker needs before Triton is imported,
and gives the device operations the judge uses (synchronize, allocator poisoning, timing).
"""

from __future__ import annotations

import platform
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where a device is used: choosing a backend must stay cheap
    import torch


class Backend(ABC):
    """One device kind. Subclasses set the class attributes and the device methods."""

    name: str
    platform: str  # "cuda" | "interpreter" | "ascend"
    timed: bool
    default_preset: str | None  # None: tasks run as written (their full size)
    # Factor on the harness's default compile and correctness limits (a slower interpreter needs more).
    stage_time_scale: float = 1.0

    @property
    @abstractmethod
    def device(self) -> torch.device:
        """The torch device tensors of a judged candidate live on."""

    @abstractmethod
    def worker_env(self) -> dict[str, str]:
        """Environment variables a worker process needs, set before triton is imported."""

    @property
    def label(self) -> str:
        """The name reports show for the verdicts of this backend (default: its name)."""
        return self.name

    def worker_python(self) -> str:
        """The interpreter worker processes run on (default: this process's own)."""
        return sys.executable

    def verdict_notes(self) -> list[str]:
        """Lines a judged verdict carries as flags, saying what this backend did and did not do."""
        return []

    @abstractmethod
    def device_name(self) -> str:
        """Human-readable device name, e.g. "NVIDIA H200" or "cpu (triton interpreter)"."""

    @abstractmethod
    def synchronize(self) -> None:
        """Wait until all queued device work is done."""

    def versions(self) -> dict[str, str]:
        """Library versions that decide a verdict: torch, triton, python (+ cuda, driver on GPU)."""
        import torch
        import triton

        return {"torch": torch.__version__, "triton": triton.__version__, "python": platform.python_version()}

    def prepare_worker(self) -> None:
        """Adjust the device's runtime inside a worker before any candidate runs (default: nothing)."""
        return None

    def judging_context(self) -> AbstractContextManager:
        """A context the judge runs a candidate's stages in (default: none; the interpreter maps
        the CUDA device to its CPU tensors, `atrl.backends.cuda_on_cpu`)."""
        return nullcontext()

    def poison_allocator(self, sizes_bytes: Sequence[int]) -> None:
        """Fill memory the allocator will hand out next with NaN, so a candidate that returns an
        uninitialised `torch.empty` buffer fails instead of passing by luck. `sizes_bytes` are the
        byte sizes of the outputs the candidate is expected to allocate."""
        import torch

        for size in sizes_bytes:
            if size > 0:
                block = torch.empty(max(size // 4, 1), dtype=torch.float32, device=self.device)
                block.fill_(float("nan"))
                del block

    def time_call_ms(self, fn: Callable[[], object], flush: Callable[[], None] | None = None) -> float:
        """Device time of one call of `fn`, in milliseconds. Only timed backends implement it."""
        raise RuntimeError(f"the {self.name} backend is not timed")
