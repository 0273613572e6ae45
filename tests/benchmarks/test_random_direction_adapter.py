"""benchmarks/random_direction_adapter.py: the control moves as far as the step, tensor by tensor."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from random_direction_adapter import random_direction  # noqa: E402


def test_each_tensor_moves_as_far_as_the_step_in_another_direction():
    torch.manual_seed(0)
    start = {"a": torch.randn(16, 64), "b": torch.randn(64, 16)}
    step = {"a": start["a"] + 0.1 * torch.randn(16, 64), "b": start["b"] + 0.01 * torch.randn(64, 16)}
    moved = random_direction(start, step, seed=1)
    for name in start:
        size = (step[name] - start[name]).norm()
        assert torch.isclose((moved[name] - start[name]).norm(), size, rtol=1e-4)
        cosine = torch.nn.functional.cosine_similarity((moved[name] - start[name]).flatten(),
                                                       (step[name] - start[name]).flatten(), dim=0)
        assert abs(float(cosine)) < 0.2  # not the step's own direction
    assert all(torch.equal(moved[k], random_direction(start, step, seed=1)[k]) for k in start)  # seeded
