"""Peak GPU memory per phase of a training step: what decides how many runs share one GPU.

The rollout (the policy's generation: KV caches of a whole step's episodes) and the update (the
rows' forward and backward) peak at different moments and scale with different settings
(`agent.context_budget` and the episodes per step, against `micro_batch_tokens`), so each phase's
peak is measured on its own: the peak statistics are read and reset at each phase's end."""

from __future__ import annotations

from typing import Any

import torch

GIB = 2**30


class GpuPeaks:
    """`start()` before the first phase, `end(name)` after each: {f"gpu_peak_{name}_gib": ...} and,
    from `record()`, the step's overall peaks (`gpu_peak_gib`, `gpu_peak_reserved_gib`). On a
    device other than CUDA every method records nothing."""

    def __init__(self, device: torch.device, cuda: Any = torch.cuda) -> None:
        self.device = device
        self.cuda = cuda
        self.on = device.type == "cuda"
        self.phases: dict[str, tuple[float, float]] = {}

    def start(self) -> None:
        self.phases = {}
        if self.on:
            self.cuda.reset_peak_memory_stats(self.device)

    def end(self, phase: str) -> None:
        if not self.on:
            return
        self.phases[phase] = (self.cuda.max_memory_allocated(self.device) / GIB,
                              self.cuda.max_memory_reserved(self.device) / GIB)
        self.cuda.reset_peak_memory_stats(self.device)

    def record(self) -> dict[str, float]:
        if not self.phases:
            return {}
        out = {f"gpu_peak_{phase}_gib": allocated for phase, (allocated, _) in self.phases.items()}
        out["gpu_peak_gib"] = max(allocated for allocated, _ in self.phases.values())
        out["gpu_peak_reserved_gib"] = max(reserved for _, reserved in self.phases.values())
        return out
