"""The `interpreter` backend: Triton kernels run on the CPU through `TRITON_INTERPRET=1`.

Correctness only (stages 1–4): tasks run at their `small` preset and nothing is timed, so a
verdict from this backend never carries a speedup.
"""

from __future__ import annotations

import torch

from atrl.backends.base import Backend


class InterpreterBackend(Backend):
    name = "interpreter"
    platform = "interpreter"
    timed = False
    default_preset = "small"

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    def worker_env(self) -> dict[str, str]:
        return {"TRITON_INTERPRET": "1"}

    def synchronize(self) -> None:
        """CPU work is synchronous: nothing to wait for."""

    def device_name(self) -> str:
        import platform

        return f"cpu ({platform.machine() or 'unknown'}, triton interpreter)"
