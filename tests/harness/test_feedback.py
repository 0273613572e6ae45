"""Feedback text: short, most useful facts first, actionable, for hand-written verdicts."""

from __future__ import annotations

from atrl.harness.feedback.failures import FAILURE_CLASSES
from atrl.harness.feedback.text import FIX_HINTS, MAX_FEEDBACK_CHARS, feedback_text
from atrl.harness.verdict import CorrectnessStats, Timing, Verdict


def _verdict(**kw) -> Verdict:
    base = dict(task_id="builtin/relu", candidate_hash="h", backend="interpreter", device="cpu", stage="done", ok=True)
    base.update(kw)
    return Verdict(**base)


def test_mismatch_feedback_leads_with_class_then_message_stats_and_fix():
    verdict = _verdict(stage="correctness", ok=False, error_class="correctness:mismatch", line=14,
                       message="output differs beyond atol=1e-4",
                       correctness=CorrectnessStats(trials=5, passed=2, max_abs_error=0.5, max_rel_error=2.0,
                                                    mismatch_fraction=0.25, first_mismatch_index=[3, 7]))
    text = feedback_text(verdict)
    lines = text.splitlines()
    assert lines[0].startswith("FAILED at correctness") and "correctness:mismatch" in lines[0]
    assert "(line 14)" in lines[0]
    assert lines[1] == "output differs beyond atol=1e-4"
    assert "max abs 0.5" in text and "25.0% of elements differ" in text and "[3, 7]" in text
    assert "Trials passed: 2/5." in text
    assert "Fix: " + FIX_HINTS["correctness:mismatch"] in text


def test_the_headline_says_what_went_wrong_not_only_the_stage():
    wrong = feedback_text(_verdict(stage="correctness", ok=False, error_class="correctness:mismatch",
                                   message="output differs"))
    slow = feedback_text(_verdict(stage="correctness", ok=False, error_class="timeout",
                                  message="the correctness stage ran past its 60 s wall-clock limit"))
    assert wrong.startswith("FAILED at correctness (wrong result)")
    assert slow.startswith("FAILED at correctness (ran out of time): timeout")
    assert "wrong result" not in slow


def test_success_on_timed_backend_reports_speedup_and_where_time_goes():
    timing = Timing(candidate_ms=0.5, reference_ms=1.0, speedup=2.0, coverage=0.78,
                    kernels=[{"name": "_matmul_kernel", "ms": 0.39, "share": 0.78, "triton": True},
                             {"name": "aten::copy_", "ms": 0.1, "share": 0.2, "triton": False}])
    text = feedback_text(_verdict(backend="cuda", timing=timing))
    assert text.startswith("CORRECT and timed.")
    assert "speedup 2.00x" in text
    assert "78% in `_matmul_kernel`" in text and "20% in non-Triton `aten::copy_`" in text
    assert "Coverage: 78%" in text
    assert "Fix:" not in text


def test_success_on_interpreter_says_it_was_not_timed():
    text = feedback_text(_verdict())
    assert "Not timed" in text and "speedup" not in text


def test_long_message_is_trimmed_to_its_end_and_total_is_bounded():
    message = "\n".join(f"frame {i}" for i in range(2000)) + "\nValueError: the real error"
    text = feedback_text(_verdict(stage="compile", ok=False, error_class="compile:error", message=message,
                                  flags=["x" * 400] * 5))
    assert len(text) <= MAX_FEEDBACK_CHARS
    assert "ValueError: the real error" in text and "frame 0\n" not in text


def test_repeated_traceback_lines_are_folded():
    message = "\n".join(["line 31, in deep: return deep(n + 1)"] * 50 + ["RecursionError: too deep"])
    text = feedback_text(_verdict(stage="compile", ok=False, error_class="compile:error", message=message))
    assert text.count("return deep") == 1 and "repeated 49 more times" in text


def test_reward_hack_is_named_as_such():
    text = feedback_text(_verdict(stage="static", ok=False, error_class="static:try-except", reward_hack=True,
                                  line=3, message="static:try-except (line 3): try/except"))
    assert "disallowed shortcut" in text


def test_every_fix_hint_names_a_known_failure_class():
    assert set(FIX_HINTS) <= set(FAILURE_CLASSES)
    assert set(FAILURE_CLASSES) <= set(FIX_HINTS)


def test_error_statistics_are_not_repeated_when_the_message_has_them():
    verdict = _verdict(stage="correctness", ok=False, error_class="correctness:mismatch",
                       message="seed 1: max abs error 0.5, max rel error 2",
                       correctness=CorrectnessStats(trials=1, passed=0, max_abs_error=0.5, max_rel_error=2.0))
    assert feedback_text(verdict).count("max abs") == 1


def test_ignored_definitions_are_named_in_one_line():
    verdict = _verdict(ignored_definitions=["Model", "get_inputs", "get_init_inputs", "__main__ block"])
    lines = feedback_text(verdict).splitlines()
    assert lines[0] == "CORRECT."
    assert lines.count("Ignored definitions (the task's own are used): "
                       "Model, get_inputs, get_init_inputs, __main__ block") == 1
    assert "Ignored definitions" not in feedback_text(_verdict())


def test_the_triton_share_is_reported_when_pytorch_did_part_of_the_work():
    stats = CorrectnessStats(trials=7, passed=7, triton_share=0.734)
    assert "Triton share of the work: 73%" in feedback_text(_verdict(stage="done", ok=True, correctness=stats))
    whole = CorrectnessStats(trials=7, passed=7, triton_share=1.0)
    assert "Triton share" not in feedback_text(_verdict(stage="done", ok=True, correctness=whole))


def test_a_provenance_rejection_says_what_was_found_and_what_to_do():
    message = ("seed 1: PyTorch computed part of the result under the strict policy: aten.clamp (32.0 KiB, "
               "100% of the reference's). Move that computation into your Triton kernel")
    text = feedback_text(_verdict(stage="correctness", ok=False, error_class="correctness:pytorch-compute", message=message,
                                  reward_hack=True))
    assert "aten.clamp" in text and "disallowed shortcut" in text
    assert "Fix: " + FIX_HINTS["correctness:pytorch-compute"] in text
