"""benchmarks/timed_checks_cpu.py: the profile stage's checks, run on the CPU, accept correct
kernels whose inputs or outputs are unusual (integer indices and targets, normalised
distributions, in-place updates, integer outputs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import timed_checks_cpu as checks  # noqa: E402

from atrl.harness.stages import profile  # noqa: E402

SAMPLE = ["builtin/embedding", "builtin/argmax_dim", "builtin/cross_entropy", "builtin/kl_div",
          "builtin/layer_norm", "builtin/cumprod", "builtin/index_select"]


@pytest.fixture(scope="module")
def kernels() -> dict:
    return {name: (task, source) for name, task, source in checks.correct_kernels(None)}


@pytest.mark.parametrize("name", SAMPLE)
def test_a_builtin_solution_passes_the_timed_checks(kernels, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(profile, "profiled_kernels", lambda *args: [])
    task, source = kernels[name]
    assert checks.run_profile_checks(task, source, "k", timed_calls=6, seed=3) is None
