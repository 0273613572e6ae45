"""The diagnosis of a wrong result, on synthetic tensors: one test per class, plus the cases of
issue 21 (a TF32-like uniform 1e-3 error, a reference too large for the preset, a one-line module)."""

from __future__ import annotations

import torch

from atrl.harness.extract import extract_code
from atrl.harness.feedback.diagnosis import FailedCall, diagnose
from atrl.harness.feedback.text import feedback_text
from atrl.harness.feedback.timeouts import explain_timeout, with_size_note
from atrl.harness.verdict import Verdict

KERNEL = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(a_ptr, o_ptr, n):\n{body}\n"
PLAIN = KERNEL.format(body="    pid = tl.program_id(0)\n    tl.store(o_ptr + pid, tl.load(a_ptr + pid))")
DOT = KERNEL.format(body="    pid = tl.program_id(0)\n    acc = tl.dot(a, b, acc)\n    tl.store(o_ptr + pid, acc)")


def _call(ref: torch.Tensor, cand: torch.Tensor, inputs=None, source: str = PLAIN, **extra) -> FailedCall:
    return FailedCall(extra.pop("failure_class", "correctness:mismatch"), inputs if inputs is not None else [ref],
                      ref, ref, cand, source, 1e-4, 1e-4, **extra)


def _cause(call: FailedCall) -> str:
    found = diagnose(call)
    assert found is not None
    return found.cause


def test_uniform_small_relative_error_with_a_default_tl_dot_is_tf32() -> None:
    ref = torch.randn(64, 64) * 100
    found = diagnose(_call(ref, ref * (1 + 1e-3 * torch.randn(64, 64).sign()), [torch.randn(64, 32)], DOT))
    assert found is not None and (found.cause, found.detail, found.kb_entry) == ("precision", "tf32",
                                                                                  "fix-precision-tf32")
    verdict = Verdict("t", "h", "cuda", "gpu", "correctness", False, "correctness:mismatch", "100% mismatched",
                      diagnosis=found.to_dict())
    text = feedback_text(verdict)
    first, second = text.splitlines()[:2]
    assert "TF32" in first and second.startswith('Fix: pass input_precision="ieee"') and "check the masks" not in text


def test_fp16_and_bf16_sources_name_their_cast() -> None:
    ref = torch.randn(4000)
    cand = ref * (1 + 1e-3 * torch.randn(4000).sign())
    assert diagnose(_call(ref, cand, source=PLAIN + "# x.to(tl.float16)\n    y = x.to(tl.float16)\n")).detail == "fp16"
    assert diagnose(_call(ref, cand, source=PLAIN.replace("tl.load(a_ptr + pid)",
                                                          "tl.load(a_ptr + pid).to(tl.bfloat16)"))).detail == "bf16"


def test_one_constant_factor_everywhere_is_a_wrong_constant_even_when_it_is_small() -> None:
    # a mean divided by n - 1: a small relative error at every element, but no rounding pattern
    ref = torch.randn(64, 64)
    found = diagnose(_call(ref, ref * (4096 / 4095), source=DOT))
    assert found is not None and (found.cause, found.kb_entry) == ("scale", "fix-wrong-constant")
    assert "1.00024 × reference" in found.evidence and "n - 1" in found.fix
    assert _cause(_call(ref, ref * 64.0)) == "scale"  # a sum where the reference averages
    # rounding noise of the same size stays a precision loss
    assert _cause(_call(ref, ref * (1 + 2.4e-4 * torch.randn(64, 64)), source=DOT)) == "precision"


def test_a_wrong_tail_is_a_boundary() -> None:
    ref = torch.randn(4000)
    cand = ref.clone()
    cand[3072:] = 0.0
    assert _cause(_call(ref, cand)) == "boundary"


def test_a_transposed_output_is_layout() -> None:
    ref = torch.randn(48, 48)
    assert _cause(_call(ref, ref.t().contiguous())) == "layout"


def test_an_output_from_a_transposed_input_is_layout() -> None:
    a = torch.randn(16, 16)

    def reference(inputs):
        return inputs[0] @ torch.arange(16.0)[:, None].expand(16, 4)

    call = _call(reference([a]), reference([a.t().contiguous()]), [a], reference_fn=reference)
    found = diagnose(call)
    assert found is not None and found.cause == "layout" and "input 0 transposed" in found.evidence


def test_wrong_only_where_the_input_is_negative_is_distribution() -> None:
    x = torch.randn(4000)
    found = diagnose(_call(torch.relu(x), x, [x]))
    assert found is not None and (found.cause, found.detail) == ("distribution", "negative")


def test_nan_where_the_reference_is_finite_is_nan_inf() -> None:
    x = torch.randn(1000)
    source = PLAIN.replace("tl.load(a_ptr + pid)", "tl.load(a_ptr + pid) / n")
    found = diagnose(_call(x, torch.full_like(x, float("inf")), [x], source))
    assert found is not None and (found.cause, found.detail) == ("nan-inf", "division")


def test_right_first_call_then_wrong_is_state() -> None:
    ref = torch.randn(1000)
    assert _cause(_call(ref, ref + 1.0, first_call_right=True)) == "state"
    assert _cause(_call(ref, ref + 1.0, first_call_right=False)) == "unknown"


def test_an_overflow_on_a_later_calls_large_inputs_is_nan_inf_not_state() -> None:
    # seen on an H200: the first trial's inputs stayed in range, a later one's largest values
    # overflowed exp into inf/inf
    x = torch.randn(1000, generator=torch.Generator().manual_seed(0))
    large = torch.randperm(1000, generator=torch.Generator().manual_seed(1))[:10]
    x[large] = 40.0
    cand = torch.tanh(x)
    cand[large] = float("nan")
    source = PLAIN.replace("tl.load(a_ptr + pid)", "tl.exp(tl.load(a_ptr + pid))")
    found = diagnose(_call(torch.tanh(x), cand, [x], source, first_call_right=True))
    assert found is not None and (found.cause, found.detail) == ("nan-inf", "exp-overflow")


def test_a_store_to_one_address_from_every_program_is_a_race() -> None:
    ref = torch.randn(1)
    racy = KERNEL.format(body="    pid = tl.program_id(0)\n    x = tl.load(a_ptr + pid)\n    tl.store(o_ptr, x)")
    assert _cause(_call(ref, ref + 1.0, source=racy)) == "race"
    assert _cause(_call(ref, ref + 1.0, source=PLAIN)) == "unknown"


def test_programs_along_a_second_axis_adding_into_one_row_are_a_race() -> None:
    # seen on an H200: each row's address depends on program_id(0) only, while the programs along
    # axis 1 read-modify-write the same row
    ref = torch.randn(8)
    body = ("    pid_m = tl.program_id(0)\n    pid_n = tl.program_id(1)\n    part = tl.load(a_ptr + pid_m * n + pid_n)\n"
            "    tl.store(o_ptr + pid_m, tl.load(o_ptr + pid_m) + part)")
    assert _cause(_call(ref, ref + 1.0, source=KERNEL.format(body=body))) == "race"
    owned = body.replace("tl.store(o_ptr + pid_m, tl.load(o_ptr + pid_m) + part)",
                         "tl.store(o_ptr + pid_m * n + pid_n, part)")
    assert _cause(_call(ref, ref + 1.0, source=KERNEL.format(body=owned))) == "unknown"


def test_failures_other_than_wrong_values_get_no_diagnosis() -> None:
    ref = torch.randn(4)
    assert diagnose(_call(ref, ref + 1.0, failure_class="correctness:input-mutation")) is None


def test_a_reference_too_large_for_the_preset_blames_the_size_not_endless_loops() -> None:
    facts = {"preset": "full", "default_preset": "small", "inputs": "(4096, 4096) float32",
             "reference_running": True}
    message, found = explain_timeout("compile", 60.0, facts, trials=5)
    assert found.cause == "preset" and "(4096, 4096)" in message and "endless" not in found.fix
    verdict = Verdict("t", "h", "interpreter", "cpu", "compile", False, "timeout", message, diagnosis=found.to_dict())
    assert "endless" not in feedback_text(verdict)
    slow = {**facts, "reference_running": True, "reference_seconds": 20.0, "preset": "small"}
    assert explain_timeout("correctness", 60.0, slow, trials=5)[1].cause == "preset"
    fast = {**slow, "reference_seconds": 0.01}
    assert explain_timeout("correctness", 60.0, fast, trials=5)[1].cause == "candidate"


def test_a_one_line_module_is_extracted_as_code() -> None:
    assert extract_code("from kernels import ModelNew") == "from kernels import ModelNew\n"


def test_the_harness_diagnoses_planted_cases_of_the_labelled_set() -> None:
    from pathlib import Path

    import yaml

    from atrl.harness.api import Harness

    root = Path(__file__).parent / "diagnosis_set"
    cases = {c["case"]: c for c in yaml.safe_load((root / "manifest.yaml").read_text())["cases"]}
    names = ["cached_input_relu", "mask_off_by_one_add", "positive_only_relu", "divisor_off_by_one_mean_dim"]
    with Harness(backend="interpreter", workers=1, use_cache=False, trials=1) as harness:
        verdicts = harness.evaluate_many([(cases[n]["task"], (root / f"{n}.py").read_text()) for n in names])
    for name, verdict in zip(names, verdicts, strict=True):
        assert verdict.diagnosis is not None and verdict.diagnosis["cause"] == cases[name]["expected"]["interpreter"]
        assert verdict.feedback.splitlines()[1].startswith("Fix: "), verdict.feedback


def test_a_timeout_says_what_ran_out_and_who_is_the_cause() -> None:
    from pathlib import Path

    from atrl.harness.api import Harness

    solution = (Path(__file__).resolve().parents[2] / "atrl" / "tasks" / "builtin" / "level1"
                / "relu.solution.py").read_text()
    # right on the first call (the compile stage), endless from the second (a correctness trial)
    endless = solution.replace("BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n",
                               "spin, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n"
                               "    while spin > 0:\n        spin = spin + 0\n", 1)
    endless = endless.replace("relu_kernel[grid](x, y, n, BLOCK=BLOCK)",
                              "spin = int(getattr(self, \"_called\", False))\n        self._called = True\n"
                              "        relu_kernel[grid](x, y, n, spin, BLOCK=BLOCK)", 1)
    assert endless.count("spin") == 6  # both replacements applied
    with Harness(backend="interpreter", workers=1, use_cache=False,
                 stage_timeouts={"compile": 60, "correctness": 3}) as harness:
        looping = harness.evaluate("builtin/relu", endless)
    with Harness(backend="interpreter", workers=1, use_cache=False, stage_timeouts={"compile": 10},
                 preset="full") as harness:
        too_large = harness.evaluate("builtin/relu", solution)
    assert (looping.stage, looping.error_class, too_large.error_class) == ("correctness", "timeout", "timeout")
    assert looping.diagnosis["cause"] == "candidate" and "the reference takes" in looping.message
    assert "preset 'small' (inputs (4096,) float32)" in looping.message
    assert too_large.diagnosis["cause"] == "preset" and "(67108864,) float32" in too_large.message
    assert "endless" not in too_large.feedback and "endless" in looping.feedback


def test_running_out_of_memory_names_the_size_judged() -> None:
    facts = {"preset": "full", "default_preset": "small", "inputs": "(16384, 16384) float32", "input_bytes": 2**30}
    text = with_size_note("the worker ran out of memory", facts)
    assert "(16384, 16384) float32 (1024 MiB)" in text and "the size may be the cause" in text
    own = with_size_note("the worker ran out of memory", {**facts, "preset": "small"})
    assert "candidate's allocations" in own
    assert with_size_note("MemoryError", {}) == "MemoryError"


def test_the_committed_set_is_what_the_planting_script_derives_from_the_builtin_solutions(tmp_path) -> None:
    # the cases are copies of builtin solutions with one planted fault: a solution edited without
    # re-running benchmarks/plant_diagnosis_set.py would leave the set judging stale kernels
    import importlib.util
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "plant_diagnosis_set.py"
    spec = importlib.util.spec_from_file_location("plant_diagnosis_set", script)
    plant = importlib.util.module_from_spec(spec)
    sys.modules["plant_diagnosis_set"] = plant
    spec.loader.exec_module(plant)
    committed = Path(__file__).parent / "diagnosis_set"
    monkey_argv = sys.argv
    try:
        sys.argv = ["plant", "--out", str(tmp_path)]
        plant.main()
    finally:
        sys.argv = monkey_argv
    fresh = sorted(p.name for p in tmp_path.iterdir())
    assert fresh == sorted(p.name for p in committed.iterdir() if p.suffix in (".py", ".yaml"))
    stale = [name for name in fresh if (tmp_path / name).read_text() != (committed / name).read_text()]
    assert not stale, f"re-run benchmarks/plant_diagnosis_set.py: {stale[:5]}"


def test_a_diagnosis_that_runs_out_of_memory_leaves_the_wrong_value_verdict_standing(monkeypatch, tmp_path) -> None:
    # At KernelBench sizes the diagnosis's float64 copies can exceed the job's allowance (a 24 GiB
    # index tensor on an H200): that is the judge's memory, so the verdict stays a mismatch.
    import torch

    from atrl.harness.stages import correctness
    from atrl.harness.stages.judge import JudgeOptions, judge
    from atrl.tasks.registry import get_task

    def out_of_memory(call):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 24.06 GiB.")

    monkeypatch.setattr(correctness, "diagnose", out_of_memory)
    monkeypatch.chdir(tmp_path)
    task = get_task("builtin/relu")
    wrong = task.solution.replace("tl.maximum(x, 0.0), mask=mask)", "tl.maximum(x, 0.0) + 1, mask=mask)")
    assert wrong != task.solution
    verdict = judge(task, wrong, JudgeOptions(backend="interpreter", preset="small", trials=1))
    assert verdict.error_class == "correctness:mismatch" and verdict.diagnosis is None, verdict.message


def test_a_slow_candidate_on_the_interpreter_is_told_what_is_slow_there() -> None:
    # a grid of many programs looping over narrow blocks is a GPU design that the interpreter runs in turn
    facts = {"preset": "small", "default_preset": "small", "reference_seconds": 0.1, "interpreted": True}
    message, found = explain_timeout("compile", 60.0, facts, trials=5)
    assert found.cause == "candidate" and "interpreter" in message and "fewer programs with larger blocks" in found.fix
    message, found = explain_timeout("compile", 60.0, {**facts, "interpreted": False}, trials=5)
    assert "interpreter" not in message and "fewer programs" not in found.fix
