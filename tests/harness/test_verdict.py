"""The `Verdict` records: the one constructor the harness uses, and how the correctness trials are
counted in words."""

from __future__ import annotations

from atrl.harness.verdict import CorrectnessStats, Verdict, candidate_hash


def test_passed_text_names_the_wide_input_trials_among_the_trials():
    assert CorrectnessStats(trials=7, passed=7, wide_trials=2).passed_text() == "7/7 (5 trials + 2 wide-input)"


def test_passed_text_without_wide_trials_is_the_plain_count():
    assert CorrectnessStats(trials=3, passed=2).passed_text() == "2/3"


def test_failed_fills_the_common_fields_and_hashes_the_code():
    verdict = Verdict.failed("demo/add", "print(1)\n", "interpreter", "cpu", "static", "static:no-kernel",
                             "no @triton.jit kernel", line=3, stage_seconds={"compile": 0.5})
    assert verdict == Verdict(task_id="demo/add", candidate_hash=candidate_hash("print(1)\n"),
                              backend="interpreter", device="cpu", stage="static", ok=False,
                              error_class="static:no-kernel", message="no @triton.jit kernel", line=3,
                              stage_seconds={"compile": 0.5})


def test_failed_without_a_class_is_a_verdict_still_being_judged():
    verdict = Verdict.failed("demo/add", "x = 1", "cuda", "H200", "compile", versions={"torch": "2"})
    assert (verdict.ok, verdict.error_class, verdict.message, verdict.versions) == (False, None, "", {"torch": "2"})
