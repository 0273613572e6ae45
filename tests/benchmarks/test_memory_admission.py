"""benchmarks/memory_admission.py's tasks: KernelBench-sized as written, reduced at `small`, all
measurable on the meta device (nothing is allocated or run here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from atrl.harness.sandbox.meta_estimate import estimate_task
from atrl.harness.static.checks import check_static

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "memory_admission.py"
_spec = importlib.util.spec_from_file_location("memory_admission", _PATH)
memory_admission = importlib.util.module_from_spec(_spec)
sys.modules["memory_admission"] = memory_admission
_spec.loader.exec_module(memory_admission)

GIB = 1 << 30


def test_tasks_have_kernelbench_sizes_as_written_and_small_ones_at_the_small_preset():
    tasks = memory_admission.kernelbench_sized_tasks()
    full = {name: estimate_task(task, None, timed=True) for name, (task, _) in tasks.items()}
    small = {name: estimate_task(task, "small", timed=False) for name, (task, _) in tasks.items()}
    assert full["19_ReLU"].inputs == full["23_Softmax"].inputs == 4096 * 393216 * 4
    assert full["48_Mean_reduction_over_a_dimension"].outputs == 128 * 4095 * 4
    assert full["5_Matrix_scalar_multiplication"].inputs == 4 * GIB
    assert all(f.method == "meta" for f in [*full.values(), *small.values()])
    assert all(small[name].peak < 128 << 20 < full[name].peak for name in tasks)


def test_every_kernel_and_the_hog_pass_the_static_checks():
    for task, solution in memory_admission.kernelbench_sized_tasks().values():
        assert check_static(solution, compute_policy=task.compute_policy) == []
    assert check_static(memory_admission.RELU_HOG, compute_policy="strict") == []
