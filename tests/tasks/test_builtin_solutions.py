"""Every builtin reference Triton solution is correct: run in the Triton interpreter at the task's
small preset, on two fresh input draws, it matches the reference (shape, dtype, allclose with the
task's tolerances, relative error against float64). And the checker itself can fail."""

from __future__ import annotations

import dataclasses

import pytest
from solution_check import check_solution

from atrl.tasks.builtin_suite import load_builtin

TASKS, _ = load_builtin()
SOLVED = [t for t in TASKS if t.solution is not None]
BY_NAME = {t.name: t for t in TASKS}


@pytest.mark.parametrize("task", SOLVED, ids=[t.id for t in SOLVED])
def test_reference_solution_matches_reference_at_small_preset(task):
    report = check_solution(task, preset="small", draws=2)
    assert report.ok, "\n".join(report.mismatches)


def _broken(task_name: str, old: str, new: str) -> str:
    source = BY_NAME[task_name].solution
    assert old in source, f"{task_name} solution no longer contains {old!r}"
    return source.replace(old, new)


def test_checker_reports_a_wrong_threshold():
    source = _broken("relu", "tl.maximum(x, 0.0)", "tl.maximum(x, 0.5)")
    report = check_solution(BY_NAME["relu"], source, draws=1)
    assert not report.ok
    assert "not allclose" in report.mismatches[0]


def test_checker_reports_off_by_one_offsets():
    source = _broken("gelu_tanh", "tl.load(x_ptr + offsets, mask=mask, other=0.0)",
                     "tl.load(x_ptr + offsets + 1, mask=offsets + 1 < n_elements, other=0.0)")
    report = check_solution(BY_NAME["gelu_tanh"], source, draws=1)
    assert not report.ok
    assert report.max_abs_error > 1e-3


def test_checker_reports_a_wrong_output_shape():
    source = _broken("softmax", "return y\n", "return y[:, 1:]\n")
    report = check_solution(BY_NAME["softmax"], source, draws=1)
    assert not report.ok
    assert "expected torch.float32(24, 300)" in report.mismatches[0]


def test_checker_reports_wrong_integer_outputs():
    source = _broken("argmax_dim", "better = tile_val > best_val", "better = tile_val < best_val")
    report = check_solution(BY_NAME["argmax_dim"], source, draws=1)
    assert not report.ok
    assert "elements differ" in report.mismatches[0]


def test_checker_reports_a_solution_that_modifies_its_inputs():
    source = _broken("relu", "tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)",
                     "tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)\n"
                     "    tl.store(x_ptr + offsets, x + 1.0, mask=mask)")
    report = check_solution(BY_NAME["relu"], source, draws=1)
    assert any("modified its inputs" in m for m in report.mismatches)


def test_checker_reports_a_precision_downgrade_that_allclose_alone_accepts():
    # fp32 -> bf16 rounding of the output: within a loose allclose, far outside the float64 bound
    source = _broken("add", "tl.store(z_ptr + offsets, x + y, mask=mask)",
                     "tl.store(z_ptr + offsets, (x + y).to(tl.bfloat16).to(tl.float32), mask=mask)")
    task = BY_NAME["add"]
    loose = dataclasses.replace(task, atol=1.0, rtol=1.0)
    report = check_solution(loose, source, draws=1)
    assert len(report.mismatches) == 1
    assert "relative error" in report.mismatches[0]


def test_checker_follows_an_in_place_reference():
    # A task whose reference updates x in place (test data of the adversarial suite): the
    # solution must leave x as the reference does, and returning a new tensor is not enough.
    from pathlib import Path

    from atrl.tasks.builtin_suite import load_builtin_task

    adversarial = Path(__file__).resolve().parents[1] / "adversarial"
    task = load_builtin_task(adversarial / "tasks" / "relu_inplace.py", level=1)
    in_place = (adversarial / "legit" / "inplace_relu.py").read_text()
    assert check_solution(task, in_place, draws=1).ok
    skipped = (adversarial / "candidates" / "inplace_skipped.py").read_text()
    report = check_solution(task, skipped, draws=1)
    assert not report.ok
    assert "differs from the reference's in-place result" in report.mismatches[0]
