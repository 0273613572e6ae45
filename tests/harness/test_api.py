"""The Harness API end to end on the interpreter: the real cascade, real misbehaving candidates."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from atrl.harness import api
from atrl.harness.api import Harness
from atrl.harness.feedback.failures import FAILURE_CLASSES
from atrl.harness.sandbox.worker import GIB, WorkerLimits
from atrl.harness.stages.judge import JudgeOptions
from atrl.tasks.registry import get_task

TIMEOUTS = {"compile": 20, "correctness": 20, "profile": 20}
LIMITS = WorkerLimits(address_space=2 * GIB)  # small, so the unbounded list hits it fast


@pytest.fixture(scope="module")
def relu():
    return get_task("builtin/relu")


def _inject(solution: str, lines: str) -> str:
    """The reference solution with `lines` run at the top of forward."""
    anchor = "        x = x.contiguous()"
    assert anchor in solution
    return solution.replace(anchor, lines + "\n" + anchor)


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    with Harness(backend="interpreter", workers=2, cache_dir=tmp_path_factory.mktemp("cache"),
                 stage_timeouts=TIMEOUTS, limits=LIMITS) as h:
        yield h


def test_misbehaving_candidates_get_their_class_and_neighbours_stay_correct(relu, tmp_path):
    good = relu.solution
    candidates = {
        "good-first": good,
        "hang": _inject(good, "        while True:\n            pass"),
        "wrong": good.replace("tl.maximum(x, 0.0)", "tl.maximum(x, 0.5)"),
        "grow": _inject(good, "        hoard = []\n        while True:\n            hoard.append([1.0] * 100000)"),
        "recursion": _inject(good + "\n\ndef deep(n):\n    return deep(n + 1) + 1\n", "        deep(0)"),
        "print": _inject(good, "        for _ in range(20):\n            print('y' * (1 << 20))"),
        "kernel-error": good.replace("tl.maximum(x, 0.0)", "tl.maximum(x, undefined_name)"),
        "out-of-bounds": good.replace("mask=mask)\n    tl.store", ")\n    tl.store")
                             .replace("offsets = pid * BLOCK", "offsets = 100000000 + pid * BLOCK"),
        "good-last": good,
    }
    seen = []
    with Harness(backend="interpreter", workers=2, use_cache=False, stage_timeouts=TIMEOUTS, limits=LIMITS) as h:
        start = time.monotonic()
        verdicts = h.evaluate_many([(relu, code) for code in candidates.values()],
                                   progress=lambda done, total, v: seen.append((done, total)))
        elapsed = time.monotonic() - start
        pids = h._pool.worker_pids()
    got = dict(zip(candidates, verdicts, strict=True))
    assert seen == [(i, len(candidates)) for i in range(1, len(candidates) + 1)]
    for name in ("good-first", "print", "good-last"):
        assert got[name].ok and got[name].score == 1.0, (name, got[name].message)
    expected = {"hang": "timeout", "wrong": "correctness:mismatch", "grow": "out-of-memory",
                "recursion": "compile:error", "kernel-error": "compile:triton", "out-of-bounds": "crash"}
    assert {name: got[name].error_class for name in expected} == expected
    assert "RecursionError" in got["recursion"].message
    assert all(v.error_class is None or v.error_class in FAILURE_CLASSES for v in verdicts)
    assert all(v.feedback and v.harness_version for v in verdicts)
    assert [v.task_id for v in verdicts] == [relu.id] * len(candidates)
    assert elapsed < 120
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)


def test_format_and_static_failures_cost_no_worker(relu, tmp_path):
    with Harness(backend="interpreter", workers=1, cache_dir=tmp_path) as h:
        no_code = h.evaluate(relu, "I would write a kernel, but not today.")
        no_model = h.evaluate(relu, "```python\nimport triton\nx = 1\n```")
        hack = h.evaluate(relu, relu.solution.replace("        x = x.contiguous()",
                                                      "        try:\n            x = x.contiguous()\n"
                                                      "        except Exception:\n            pass"))
        assert h._pool is None
    assert (no_code.stage, no_code.error_class, no_code.score) == ("format", "format:no-code", 0.0)
    assert no_model.stage == "static" and no_model.error_class.startswith("static:") and not no_model.reward_hack
    assert hack.error_class == "static:try-except" and hack.reward_hack and hack.line is not None
    assert hack.score == 0.0 and "disallowed shortcut" in hack.feedback


def test_second_evaluation_is_a_cache_hit_and_no_cache_reruns(harness, relu, tmp_path):
    first = harness.evaluate(relu, relu.solution)
    second = harness.evaluate(relu, relu.solution)
    assert first.ok and not first.cached
    assert second.cached and second.ok and second.candidate_hash == first.candidate_hash
    with Harness(backend="interpreter", workers=1, cache_dir=harness.cache.root) as fresh:
        assert fresh.evaluate(relu, relu.solution).cached
        assert fresh._pool is None  # a hit starts no worker
    with Harness(backend="interpreter", workers=1, cache_dir=harness.cache.root, use_cache=False,
                 limits=LIMITS) as uncached:
        rerun = uncached.evaluate(relu, relu.solution)
        assert rerun.ok and not rerun.cached and uncached._pool is not None


def test_cache_key_separates_trials(harness, relu):
    harness.evaluate(relu, relu.solution)
    with Harness(backend="interpreter", workers=1, cache_dir=harness.cache.root, trials=2, limits=LIMITS) as other:
        assert not other.evaluate(relu, relu.solution).cached


def test_submit_returns_a_future_and_module_evaluate_takes_an_id(relu, tmp_path):
    with Harness(backend="interpreter", workers=1, cache_dir=tmp_path, limits=LIMITS) as h:
        future = h.submit(relu, relu.solution)
        assert future.result(timeout=120).ok
    verdict = api.evaluate("builtin/relu", "no code here", backend="interpreter", cache_dir=tmp_path)
    assert verdict.error_class == "format:no-code"


def test_select_gpus_picks_a_ranks_device_and_rejects_invisible_ones():
    from atrl.errors import UsageError
    from atrl.harness.api import select_gpus

    assert select_gpus(("2", "5"), None) == ("2", "5")
    assert select_gpus(("2", "5"), [1]) == ("5",)
    with pytest.raises(UsageError, match="not visible"):
        select_gpus(("2", "5"), [2])


def test_size_hint_only_for_a_timeout_above_the_backends_default_preset():
    from atrl.backends.cuda import CudaBackend
    from atrl.backends.interpreter import InterpreterBackend

    interpreter = InterpreterBackend()
    assert "--preset small" in api.size_hint("timeout", "full", interpreter)
    assert api.size_hint("timeout", "small", interpreter) is None
    assert api.size_hint("correctness:mismatch", "full", interpreter) is None
    assert api.size_hint("timeout", "full", CudaBackend()) is None  # cuda runs tasks full by default


@pytest.mark.slow
def test_timeout_at_a_larger_preset_says_the_size_may_be_the_cause(relu, tmp_path):
    hang = (Path(__file__).resolve().parents[1] / "adversarial" / "faults" / "hang_python.py").read_text()
    timeouts = {"compile": 5, "correctness": 5, "profile": 5}
    with Harness(backend="interpreter", workers=1, preset="full", cache_dir=tmp_path, stage_timeouts=timeouts,
                 trials=1) as h:
        verdict = h.evaluate(relu, hang)
    assert verdict.error_class == "timeout"
    assert "size may be the cause" in verdict.feedback and "--preset small" in verdict.feedback


def test_judge_options_carry_the_backends_default_preset_filled_in_by_the_caller(tmp_path):
    # the worker judges at options.preset as given: the default is filled in here, once
    with Harness(backend="interpreter", workers=1, cache_dir=tmp_path) as default, \
            Harness(backend="interpreter", workers=1, cache_dir=tmp_path, preset="full") as full:
        assert (default.options.preset, full.options.preset) == ("small", "full")


def test_policy_for_is_the_runs_policy_else_the_tasks_own(relu):
    partial_task = dataclasses.replace(relu, compute_policy="partial")
    assert JudgeOptions(backend="interpreter", preset="small").policy_for(partial_task) == "partial"
    assert JudgeOptions(backend="interpreter", preset="small", compute_policy="strict").policy_for(partial_task) == "strict"
