"""The learning-rate schedule shared by RL training and SFT."""

from __future__ import annotations

import math


def lr_factor(step: int, total: int, warmup: int, schedule: str, floor: float) -> float:
    """Multiplier of the peak LR at optimizer step `step` (0-based) of `total`: linear warm-up
    over `warmup` steps, then constant, linear or cosine decay to `floor` × peak."""
    if step < warmup:
        return (step + 1) / warmup
    if schedule == "constant":
        return 1.0
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    if schedule == "linear":
        return 1.0 - (1.0 - floor) * progress
    return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))
