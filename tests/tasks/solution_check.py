"""Check a builtin task's reference Triton solution against the task's reference module.

The test-side counterpart of the harness's correctness stage, reduced to what proving our own
solutions needs: both sources are written to fresh files and imported (Triton reads kernel
source through `inspect`, so an `exec` of a string is not enough), the models are constructed
under the same seed (so their parameters match), and for each input draw the outputs are
compared for shape, dtype, `allclose` with the task's tolerances, and the relative error
‖out − ref‖ / ‖ref‖ against a float64 evaluation of the reference.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import torch

from atrl.tasks.task import Task

_module_counter = itertools.count()


@dataclass
class SolutionReport:
    """Outcome of checking one solution: `mismatches` lists every failed comparison."""

    task_id: str
    draws: int
    mismatches: list[str] = field(default_factory=list)
    max_abs_error: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.mismatches


def import_source(source: str, directory: Path, stem: str) -> ModuleType:
    """Write `source` to `directory/<stem>_<n>.py` and import it as a fresh module."""
    path = directory / f"{stem}_{next(_module_counter)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _to_float64(value):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(torch.float64)
    return value


def _compare(out, expected, expected64, atol: float, rtol: float, bound: float, label: str) -> tuple[list[str], float]:
    if not isinstance(out, torch.Tensor):
        return [f"{label}: output is {type(out).__name__}, not a tensor"], float("inf")
    if out.shape != expected.shape or out.dtype != expected.dtype:
        return [f"{label}: got {out.dtype}{tuple(out.shape)}, expected {expected.dtype}{tuple(expected.shape)}"], float("inf")
    if not expected.is_floating_point():
        wrong = (out != expected).sum().item()
        return ([f"{label}: {wrong} of {out.numel()} elements differ"] if wrong else []), float(wrong > 0)
    if out.numel() == 0:
        return [], 0.0
    diff = (out.double() - expected.double()).abs()
    max_abs = diff.max().item()
    problems = []
    if not torch.allclose(out, expected, atol=atol, rtol=rtol):
        bad = ~torch.isclose(out, expected, atol=atol, rtol=rtol)
        first = tuple(int(i) for i in bad.nonzero()[0])
        problems.append(
            f"{label}: not allclose(atol={atol}, rtol={rtol}): {int(bad.sum())} of {out.numel()} elements, "
            f"max abs error {max_abs:.3g}, first at {first}"
        )
    scale = expected64.norm().item()
    if scale > 0:
        relative = (out.double() - expected64).norm().item() / scale
        if relative > bound:
            problems.append(f"{label}: relative error {relative:.3g} against float64 exceeds {bound:g}")
    return problems, max_abs


def check_solution(task: Task, solution_source: str | None = None, preset: str = "small",
                   draws: int = 2, seed: int = 0) -> SolutionReport:
    """Run `solution_source` (default: the task's own solution) against the reference at `preset`.

    Inputs come from the task's `get_inputs()` under seeds `seed + 1 ... seed + draws`; both models
    are built from `get_init_inputs()` under `seed`. Inputs must be left unchanged by the solution,
    or, for a task whose reference works in place, end as the reference leaves them.
    """
    source = solution_source if solution_source is not None else task.solution
    if source is None:
        raise ValueError(f"{task.id} has no solution")
    atol, rtol = task.tolerances()
    bound = task.relative_error_bound()
    report = SolutionReport(task_id=task.id, draws=draws)
    with tempfile.TemporaryDirectory() as tmp:
        reference = import_source(task.source_at(preset), Path(tmp), "reference")
        solution = import_source(source, Path(tmp), "solution")
        torch.manual_seed(seed)
        init_inputs = reference.get_init_inputs()
        torch.manual_seed(seed)
        model = reference.Model(*copy.deepcopy(init_inputs))
        torch.manual_seed(seed)
        model_new = solution.ModelNew(*copy.deepcopy(init_inputs))
        model64 = copy.deepcopy(model).to(torch.float64)
        for draw in range(draws):
            torch.manual_seed(seed + 1 + draw)
            inputs = reference.get_inputs()
            with torch.no_grad():
                expected_inputs = [x.clone() for x in inputs]
                expected = model(*expected_inputs)
                expected64 = model64(*[_to_float64(x) for x in inputs])
                given = [x.clone() for x in inputs]
                out = model_new(*given)
            label = f"draw {draw}"
            if task.reference_mutates_inputs:
                for i, (got, want) in enumerate(zip(given, expected_inputs, strict=True)):
                    if not torch.allclose(got, want, atol=atol, rtol=rtol):
                        report.mismatches.append(f"{label}: input {i} differs from the reference's in-place result")
            elif not all(torch.equal(a, b) for a, b in zip(given, inputs, strict=True)):
                report.mismatches.append(f"{label}: the solution modified its inputs")
            problems, max_abs = _compare(out, expected, expected64, atol, rtol, bound, label)
            report.mismatches.extend(problems)
            report.max_abs_error = max(report.max_abs_error, max_abs)
    return report
