"""Whole-file answers end to end: the harness runs the task's own Model, get_inputs and
get_init_inputs, never the candidate's copies or its `__main__` block, accepts correct whole files
on the interpreter and tells the agent what it ignored; uses of reference names are rejected."""

from __future__ import annotations

import pytest
import torch
from whole_file import load

from atrl.harness.api import Harness
from atrl.harness.stages.loading import build_models, import_candidate, load_task_module, write_candidate
from atrl.tasks.registry import get_task

ACCEPTED = load("accepted")
REJECTED = load("rejected")
TIMEOUTS = {"compile": 60, "correctness": 60, "profile": 60}

IMPOSTOR = """
import torch
import torch.nn as nn

RAN_MAIN = False


class Model(nn.Module):
    def forward(self, x):
        return x * 0.0


def get_inputs():
    return [torch.zeros(3)]


def get_init_inputs():
    return [1, 2, 3]


class ModelNew(nn.Module):
    def forward(self, x):
        return x


if __name__ == "__main__":
    RAN_MAIN = True
    raise SystemExit("the __main__ block ran")
"""


def test_candidate_definitions_never_replace_the_tasks_own(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    task = get_task("builtin/relu")
    task_module = load_task_module(task, "small")
    own_model, own_inputs, own_init = task_module.Model, task_module.get_inputs, task_module.get_init_inputs
    candidate = import_candidate(write_candidate(IMPOSTOR, "impostor"))
    assert candidate.__name__ != "__main__" and candidate.RAN_MAIN is False
    assert candidate.Model is not own_model and candidate.get_inputs is not own_inputs
    assert (task_module.Model, task_module.get_inputs, task_module.get_init_inputs) == (own_model, own_inputs, own_init)
    reference, _, init_inputs = build_models(task_module, candidate, 0, torch.float32, torch.device("cpu"))
    assert type(reference) is own_model and init_inputs == []
    assert task_module.get_inputs()[0].shape == (4096,)  # the small preset's N, not the impostor's 3


@pytest.fixture(scope="module")
def accepted_verdicts():
    with Harness(backend="interpreter", workers=2, trials=2, use_cache=False, stage_timeouts=TIMEOUTS) as harness:
        verdicts = harness.evaluate_many([(case.task, case.source) for case in ACCEPTED])
    return {case.name: verdict for case, verdict in zip(ACCEPTED, verdicts, strict=True)}


@pytest.mark.slow
@pytest.mark.parametrize("case", ACCEPTED, ids=[c.name for c in ACCEPTED])
def test_whole_file_answer_is_judged_correct_on_the_interpreter(accepted_verdicts, case):
    verdict = accepted_verdicts[case.name]
    assert verdict.ok, (verdict.error_class, verdict.message[:800])
    assert verdict.stage == "done" and verdict.correctness.passed == verdict.correctness.trials > 0


@pytest.mark.slow
def test_feedback_names_what_was_ignored(accepted_verdicts):
    verdict = accepted_verdicts["add_test_function_and_main_block"]
    assert verdict.ignored_definitions == ["Model", "get_inputs", "get_init_inputs", "__main__ block"]
    assert ("Ignored definitions (the task's own are used): Model, get_inputs, get_init_inputs, __main__ block"
            in verdict.feedback.splitlines())
    assert "Model" not in accepted_verdicts["rms_norm_subclasses_own_model"].ignored_definitions  # its base class


@pytest.mark.parametrize("case", REJECTED, ids=[c.name for c in REJECTED])
def test_use_of_a_reference_name_is_a_static_reward_hack(case):
    with Harness(backend="interpreter", workers=1, use_cache=False) as harness:
        verdict = harness.evaluate(case.task, case.source)
    assert (verdict.stage, verdict.error_class, verdict.line) == ("static", "static:reference-access", case.line)
    assert verdict.reward_hack and "disallowed shortcut" in verdict.feedback


_ECHO_TAIL = '''

import triton
import triton.language as tl


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


class ModelNew(BASE):
    INIT
    def forward(self, x, *rest):
        y = torch.empty_like(x)
        _copy_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
'''
_ECHO_STYLES = {
    "subclass": _ECHO_TAIL.replace("BASE", "Model").replace("    INIT\n", ""),
    "module": _ECHO_TAIL.replace("BASE", "nn.Module").replace(
        "INIT", "def __init__(self, *args, **kwargs):\n        super(ModelNew, self).__init__()\n"),
}


@pytest.mark.skipif(not __import__("os").environ.get("ATRL_KERNELBENCH"),
                    reason="no KernelBench checkout: set $ATRL_KERNELBENCH to its root")
@pytest.mark.parametrize("style", sorted(_ECHO_STYLES))
def test_every_kernelbench_file_echoed_whole_passes_the_static_stage(style):
    # The whole reference file, then a Triton ModelNew (as nn.Module, or as a subclass of the
    # echoed Model that inherits its constructor): nothing in KernelBench's own code may make the
    # static stage reject the answer.
    import os
    from pathlib import Path

    from atrl.harness.static.checks import check_static
    from atrl.tasks.kernelbench import compute_policy_for

    root = Path(os.environ["ATRL_KERNELBENCH"])
    root = root / "KernelBench" if (root / "KernelBench").is_dir() else root
    rejected = {}
    for level in (1, 2, 3):
        for path in sorted((root / f"level{level}").glob("*.py")):
            found = check_static(path.read_text() + _ECHO_STYLES[style], compute_policy=compute_policy_for(level))
            if found:
                rejected[f"level{level}/{path.stem}"] = found[0].message
    assert len(list(root.glob("level[123]/*.py"))) >= 250
    assert rejected == {}
