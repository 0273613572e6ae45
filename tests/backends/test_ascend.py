"""The `ascend` backend: its environment, its mode, and (with the environment) real lowering by
triton-ascend's compiler followed by its interpreter, through the harness's worker pool."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from atrl.backends import default_backend_for_suite, resolve_backend
from atrl.backends.ascend import detect_mode
from atrl.backends.ascend_env import SETUP_COMMAND, read_env
from atrl.backends.ascend_lowering import MAX_PROGRAMS, check_grid, trim_compiler_message
from atrl.errors import UsageError
from atrl.harness.stages.trace import StageFailure

CANDIDATES = Path(__file__).parent / "ascend_candidates"
HAVE_ENV = read_env() is not None
needs_env = pytest.mark.skipif(not HAVE_ENV, reason=f"the triton-ascend environment is absent: run `{SETUP_COMMAND}`")


def test_ci_has_the_ascend_environment():
    """CI sets ATRL_CI_ASCEND=1 after `atrl setup ascend`: there the ascend tests must run, not skip."""
    if os.environ.get("ATRL_CI_ASCEND") == "1":
        assert HAVE_ENV, f"CI must create the triton-ascend environment with `{SETUP_COMMAND}`"


def test_missing_environment_names_the_setup_command(monkeypatch, tmp_path):
    monkeypatch.setenv("ATRL_ASCEND_ENV", str(tmp_path / "none"))
    with pytest.raises(UsageError, match="atrl setup ascend"):
        resolve_backend("ascend")


def test_workers_import_this_checkouts_harness():
    # the environment's own link points at whichever checkout last ran the setup command
    import atrl
    from atrl.backends.ascend import AscendBackend

    env = AscendBackend.__new__(AscendBackend)
    env.mode = "lowering"
    first = Path(env.worker_env()["PYTHONPATH"].split(os.pathsep)[0])
    assert (first / "atrl").resolve() == Path(atrl.__file__).resolve().parent
    assert sorted(p.name for p in first.iterdir()) == ["atrl"]  # nothing else: never stock Triton


def test_mode_is_lowering_without_cann_or_device(tmp_path):
    (tmp_path / "lib/python3.11/site-packages/torch_npu").mkdir(parents=True)
    assert detect_mode(tmp_path, {}) == "lowering"  # torch_npu alone is not enough
    assert detect_mode(tmp_path, {"ASCEND_HOME_PATH": "/opt/cann"}) == (
        "npu" if Path("/dev/davinci0").exists() else "lowering")


def test_npukernelbench_defaults_to_ascend():
    assert default_backend_for_suite("npukernelbench", "auto") == "ascend"
    assert default_backend_for_suite("npukernelbench", "interpreter") == "interpreter"
    assert default_backend_for_suite("builtin", "auto") == "auto"


def test_grid_over_the_npu_limit_is_a_compile_failure():
    check_grid("k", (MAX_PROGRAMS,))
    with pytest.raises(StageFailure) as failure:
        check_grid("k", (256, 256))
    assert failure.value.error_class == "compile:grid-limit" and "65536 programs" in failure.value.message


def test_compiler_message_is_trimmed_to_its_error():
    noisy = "\n".join(["///------------------[ERROR][Triton][BEG]------------------",
                       "[ConvertTritonIRToLinalgIR] encounters error:", *[f"  %{i} = arith.addi" for i in range(40)],
                       "loc(x.py:3): error: failed to legalize operation 'tt.foo'",
                       "[INFO]: The compiled kernel cache is in /somewhere", "///---[ERROR][Triton][END]---"])
    trimmed = trim_compiler_message(noisy, limit=5)
    lines = trimmed.splitlines()
    assert lines[0].startswith("[ConvertTritonIRToLinalgIR] encounters error")
    assert "failed to legalize operation 'tt.foo'" in lines[1]
    assert "cache is in" not in trimmed and "[ERROR][Triton]" not in trimmed
    assert lines[-1] == "(... 37 more lines)"


# ---- with the environment: real lowering and interpretation in worker processes --------------
@pytest.fixture(scope="module")
def ascend_harness(tmp_path_factory):
    from atrl.harness.api import Harness

    with Harness(backend="ascend", workers=1, trials=2, use_cache=False,
                 cache_dir=tmp_path_factory.mktemp("cache")) as harness:
        yield harness


def _relu():
    from atrl.tasks.registry import get_task

    return get_task("relu")


@needs_env
def test_reference_solution_lowers_then_passes_in_the_interpreter(ascend_harness):
    task = _relu()
    verdict = ascend_harness.evaluate(task, task.solution)
    assert verdict.ok, verdict.message
    assert verdict.backend == "ascend" and verdict.versions["triton-ascend"] == "3.2.0"
    assert verdict.versions["ascend_mode"] == "lowering" and verdict.timing is None
    note = next(f for f in verdict.flags if f.startswith("ascend:"))
    assert "lowered to linalg for Ascend910B3: relu_kernel" in note and "not timed" in note


@needs_env
def test_every_kernel_lowers_after_others_ran_in_the_interpreter(ascend_harness):
    verdict = ascend_harness.evaluate(_relu(), (CANDIDATES / "relu_two_kernels.py").read_text())
    assert verdict.ok, verdict.message
    # this job's kernels only: the worker judged relu_kernel before (the harness is shared)
    assert any("Ascend910B3: clamp_kernel, copy_kernel;" in f for f in verdict.flags), verdict.flags


@needs_env
def test_autotuned_kernel_imports_and_runs(ascend_harness):
    legit = Path(__file__).parents[1] / "adversarial" / "legit" / "autotuned_relu.py"
    verdict = ascend_harness.evaluate(_relu(), legit.read_text())
    assert verdict.ok, verdict.message


@needs_env
def test_fp64_math_is_rejected_at_compile_with_the_compiler_message(ascend_harness):
    verdict = ascend_harness.evaluate(_relu(), (CANDIDATES / "relu_fp64_sqrt.py").read_text())
    assert (verdict.stage, verdict.error_class) == ("compile", "compile:lowering")
    assert "could not lower kernel relu_kernel" in verdict.message and "but got fp64" in verdict.message
    assert verdict.line == 16  # the tl.sqrt line of the candidate


@needs_env
def test_grid_over_the_limit_is_rejected_before_the_kernel_runs(ascend_harness):
    task = dataclasses.replace(_relu(), presets={"small": {"N": 70000}})
    verdict = ascend_harness.evaluate(task, (CANDIDATES / "relu_grid_too_large.py").read_text())
    assert verdict.error_class == "compile:grid-limit", verdict.message


@needs_env
def test_setup_on_a_ready_environment_installs_nothing():
    from atrl.backends.ascend_env import create_env

    state, installed = create_env(read_env().root)
    assert not installed and state.versions["triton-ascend"] == "3.2.0"


def test_npukernelbench_tasks_get_the_ascend_rules_on_any_backend():
    from atrl.backends.interpreter import InterpreterBackend
    from atrl.harness.api import target_platform
    from atrl.tasks.registry import get_task, load_suite

    npu_task = load_suite("npukernelbench", FIXTURE).tasks[0]
    assert target_platform(npu_task, InterpreterBackend()) == "ascend"
    assert target_platform(get_task("relu"), InterpreterBackend()) == "interpreter"


FIXTURE = Path(__file__).parent / "npukernelbench_fixture"
SIGMOID = '''```python
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ACC: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(ACC)
    y = 1.0 / (1.0 + tl.exp(-x))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        sigmoid_kernel[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64, ACC=ACCUMULATOR)
        return y
```'''


@needs_env
def test_npukernelbench_eval_runs_on_ascend_by_default_and_says_how_it_judged(tmp_path):
    import json

    from atrl.eval.config import EvalConfig
    from atrl.eval.runner import run_eval

    replay = tmp_path / "replay.jsonl"
    answers = [SIGMOID.replace("ACCUMULATOR", "tl.float64"), SIGMOID.replace("ACCUMULATOR", "tl.float32")]
    replay.write_text("".join(json.dumps({"task_id": "npukernelbench/level0/1_sigmoid", "turn": turn,
                                          "response": text}) + "\n" for turn, text in enumerate(answers)))
    config = EvalConfig(suite="npukernelbench", path=str(FIXTURE), policy=f"replay:{replay}", max_turns=2,
                        trials=1, use_cache=False)
    result = run_eval(config, tmp_path / "run")
    (episode,) = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert episode["backend"] == "ascend:lowering" and episode["timed"] is False
    assert [t["error_class"] for t in episode["turns"]] == ["compile:lowering", None]
    assert episode["turns"][1]["correct"]
    report = result.report.read_text()
    assert "backend: ascend:lowering (auto)" in report and "not timed on ascend:lowering" in report


def test_frontend_excerpt_keeps_the_failing_lines_only():
    from atrl.backends.ascend_lowering import shorten_source_excerpt

    text = "\n".join(["CompilationError: at 9:4:", "def k(x):", *[f"    a{i} = {i}" for i in range(8)],
                      "    ^", "ValueError('bad')"])
    assert shorten_source_excerpt(text).splitlines() == [
        "CompilationError: at 9:4:", "    ...", "    a6 = 6", "    a7 = 7", "    ^", "ValueError('bad')"]
    assert shorten_source_excerpt("no caret here") == "no caret here"


def test_npukernelbench_eval_without_the_environment_names_the_setup_command(monkeypatch, tmp_path, capsys):
    from atrl.cli import main

    monkeypatch.setenv("ATRL_ASCEND_ENV", str(tmp_path / "none"))
    status = main(["eval", "--suite", "npukernelbench", "--path", str(FIXTURE), "--policy", "reference",
                   "--out", str(tmp_path / "run")])
    assert status == 2 and "create it with `atrl setup ascend`" in capsys.readouterr().err
    assert not (tmp_path / "run" / "episodes.jsonl").exists()


@needs_env
def test_lowering_mode_gives_the_slower_interpreter_longer_default_limits():
    from atrl.harness.api import Harness

    ascend, stock = Harness(backend="ascend", workers=1), Harness(backend="interpreter", workers=1)
    assert ascend.stage_timeouts.correctness == 3 * stock.stage_timeouts.correctness
    assert ascend.stage_timeouts.compile == 3 * stock.stage_timeouts.compile


@needs_env
def test_reference_policy_judges_a_suite_given_by_path(tmp_path):
    """The oracle looks its tasks up among the run's own: a suite read from --path has no registry
    entry to find them by id. The fixture's task has no Triton solution, so the oracle answers
    without code."""
    import json

    from atrl.eval.config import EvalConfig
    from atrl.eval.runner import run_eval

    config = EvalConfig(suite="npukernelbench", path=str(FIXTURE), policy="reference", max_turns=1,
                        trials=1, use_cache=False)
    run_eval(config, tmp_path / "run")
    (episode,) = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert episode["task_id"] == "npukernelbench/level0/1_sigmoid"
    assert [t["error_class"] for t in episode["turns"]] == ["format:no-code"]
