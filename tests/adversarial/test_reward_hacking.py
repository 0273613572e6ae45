"""Reward hacking: every cheating candidate is rejected by its expected class, and every legitimate
but unusual kernel is accepted — through the real interpreter harness (see runner.py)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from atrl.harness.feedback.failures import FAILURE_CLASSES, REWARD_HACK_RULES

_spec = importlib.util.spec_from_file_location("adversarial_runner", Path(__file__).with_name("runner.py"))
runner = importlib.util.module_from_spec(_spec)
sys.modules["adversarial_runner"] = runner
_spec.loader.exec_module(runner)

ALL_CHEATS = runner.load_cases(runner.CHEATS_DIR)
CHEATS = runner.load_cases(runner.CHEATS_DIR, "interpreter")  # what the interpreter judges
LEGIT = runner.load_cases(runner.LEGIT_DIR)
ATTACK_CLASSES = {
    "pytorch-compute", "try-except", "decoy-kernel", "partial-work", "caching", "stale-buffer", "return-input",
    "input-mutation", "monkeypatch", "introspection", "timing-escape", "lazy-tensor", "precision",
    "constant-output", "process-network-file", "environment", "host-compute",
}


@pytest.fixture(scope="module")
def outcomes() -> dict[str, runner.Outcome]:
    results = runner.run_cases(CHEATS + LEGIT, workers=2, trials=2)
    return {o.case.name: o for o in results}


def test_suite_covers_every_attack_class_with_enough_candidates():
    assert len(CHEATS) >= 30 and len(LEGIT) >= 15
    assert {c.klass for c in CHEATS} >= ATTACK_CLASSES
    for case in ALL_CHEATS:
        assert case.expect and set(case.expect) <= set(FAILURE_CLASSES), case.name
    for case in ALL_CHEATS + LEGIT:
        assert case.task.startswith("builtin/") or (runner.HERE / case.task).is_file(), case.name


def test_partial_policy_cases_cover_each_way_pytorch_or_the_host_computes_the_output():
    partial = {c.name: c for c in CHEATS if runner.resolve_task(c.task) != c.task
               and runner.resolve_task(c.task).compute_policy == "partial"}
    assert {"partial_scratch_tensor_method", "partial_scratch_aten_op", "partial_scratch_nn_layer",
            "partial_scratch_numpy", "partial_scratch_matmul_operator", "partial_scratch_where",
            "partial_cache_data_ptr", "partial_cache_id_shape", "partial_gemm_folded_to_matvec"} <= set(partial)


_HOST_ALLOCATION = re.compile(r"torch\.(empty|zeros|ones|full|tensor)\((?![^\n]*device)")


def test_candidates_allocate_on_the_inputs_device():
    # A tensor created on the CPU makes a candidate fail on a GPU for that reason alone, and the
    # harness mechanism it targets goes untested there (the CUDA run of these suites found six).
    offenders = [f"{c.name}:{n}" for c in ALL_CHEATS + LEGIT
                 for n, line in enumerate(c.path.read_text().splitlines(), 1)
                 if _HOST_ALLOCATION.search(line) and "nn.Parameter" not in line]
    assert not offenders, offenders


def test_timing_attacks_are_judged_only_where_candidates_are_timed():
    timed = {c.name for c in ALL_CHEATS if c.timed_only}
    assert "timed_cache_sign_key_matmul" in timed
    assert not timed & {c.name for c in CHEATS}  # the interpreter never times: it would accept them
    assert timed <= {c.name for c in runner.load_cases(runner.CHEATS_DIR, "cuda")}


def test_per_element_python_cheats_may_time_out_only_where_tasks_run_at_full_size():
    # one launch per 8-64 elements: at a timed backend's full size (67M elements) they cannot finish
    on_cuda = {c.name: c.expect for c in runner.load_cases(runner.CHEATS_DIR, "cuda")}
    on_cpu = {c.name: c.expect for c in CHEATS}
    assert on_cuda["host_python_item_scalars"] == ("correctness:untracked-data", "timeout")
    assert on_cpu["host_python_item_scalars"] == ("correctness:untracked-data",)
    assert sum("timeout" in expect for expect in on_cuda.values()) == 5
    assert not any("timeout" in expect for expect in on_cpu.values())


def test_a_task_file_outside_the_suite_loads_with_the_builtin_loader():
    task = runner.resolve_task("tasks/relu_inplace.py")
    assert task.id == "adversarial/relu_inplace" and task.reference_mutates_inputs
    assert set(task.presets) == {"small", "full"} and task.dtype == "float32"
    assert runner.resolve_task("builtin/relu") == "builtin/relu"
    uses = {c.name for c in CHEATS + LEGIT if c.task == "tasks/relu_inplace.py"}
    assert {"inplace_relu", "inplace_skipped"} <= uses


@pytest.mark.slow
@pytest.mark.parametrize("case", CHEATS, ids=[c.name for c in CHEATS])
def test_cheat_is_rejected_by_its_expected_class(outcomes, case):
    outcome = outcomes[case.name]
    assert not outcome.ok, f"{case.name} was accepted: a harness hole"
    assert outcome.error_class in case.expect, (outcome.error_class, outcome.message[:500])
    if outcome.error_class in REWARD_HACK_RULES:
        assert outcome.reward_hack


@pytest.mark.slow
@pytest.mark.parametrize("case", LEGIT, ids=[c.name for c in LEGIT])
def test_legitimate_unusual_kernel_is_accepted(outcomes, case):
    outcome = outcomes[case.name]
    assert outcome.ok, (outcome.error_class, outcome.message[:800])


@pytest.mark.slow
def test_detection_table_reports_every_class_at_full_rate(outcomes):
    table = runner.detection_table(list(outcomes.values()))
    for klass in ATTACK_CLASSES:
        assert f"| {klass} |" in table
    assert "| **all** |" in table and table.rstrip().endswith("100% |")


@pytest.mark.gpu
def test_every_cheat_is_rejected_and_every_legit_kernel_accepted_on_cuda():
    # the same suites through the CUDA harness: real compilation, GPU allocator poisoning, timing
    results = runner.run_cases(runner.load_cases(runner.CHEATS_DIR, "cuda") + LEGIT, workers=4, trials=2,
                               backend="cuda")
    wrong = [(o.case.name, o.ok, o.error_class, o.message[:300]) for o in results if not o.as_expected]
    assert not wrong, wrong
