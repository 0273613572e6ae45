"""The KernelBench candidate set: its manifest, the `# @echo-reference` marker, the runner's
summary, and (with a KernelBench checkout in $ATRL_KERNELBENCH) a handful of candidates judged on
the interpreter at the `small` preset, each getting the verdict the manifest expects."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from atrl.errors import UsageError
from atrl.harness.feedback.failures import FAILURE_CLASSES

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import kernelbench_candidates as kc  # noqa: E402

_spec = importlib.util.spec_from_file_location("kernelbench_set", BENCHMARKS / "kernelbench_set.py")
kset = importlib.util.module_from_spec(_spec)
sys.modules["kernelbench_set"] = kset
_spec.loader.exec_module(kset)

CANDIDATES = kc.load_candidates()
KERNELBENCH = os.environ.get(kc.KERNELBENCH_ENV)
needs_checkout = pytest.mark.skipif(
    not KERNELBENCH, reason=f"no KernelBench checkout: set ${kc.KERNELBENCH_ENV} to its root to judge the set")


def test_the_set_is_kernelbench_sized():
    correct = [c for c in CANDIDATES if c.kind == "correct"]
    assert len(correct) >= 40
    assert {c.level for c in correct} == {1, 2}
    assert len({c.task for c in correct}) == len(correct)  # one correct kernel per task
    assert any(c.kind == "cheat" for c in CANDIDATES) and any(c.kind == "wrong" for c in CANDIDATES)


def test_every_file_is_listed_and_every_expected_class_exists():
    listed = {c.path.name for c in CANDIDATES}
    on_disk = {p.name for p in kc.SET_DIR.glob("*.py")}
    assert listed == on_disk
    for c in CANDIDATES:
        assert all(e in FAILURE_CLASSES for e in c.expect), (c.name, c.expect)
        if c.principle:
            assert set(kc.PRINCIPLES[c.principle]) & set(c.expect), c.name


def _manifest(tmp_path: Path, text: str) -> Path:
    (tmp_path / "a.py").write_text("class ModelNew: pass\n")
    (tmp_path / "manifest.yaml").write_text(text)
    return tmp_path


@pytest.mark.parametrize(("text", "problem"), [
    ("- {file: a.py, task: level1/19_ReLU, kind: correct, style: s, expect: ok, extra: 1}\n", "unknown keys extra"),
    ("- {file: a.py, task: level1/19_ReLU, kind: good, style: s, expect: ok}\n", "kind 'good' is unknown"),
    ("- {file: a.py, task: level1/19_ReLU, kind: cheat, style: s, expect: ok}\n", "kind cheat with expect 'ok'"),
    ("- {file: b.py, task: level1/19_ReLU, kind: correct, style: s, expect: ok}\n", "b.py does not exist"),
    ("- {file: a.py, task: level1/19_ReLU, style: s, expect: ok}\n", "lacks kind"),
    ("- {file: a.py, task: level1/19_ReLU, kind: wrong, style: s, expect: [x], principle: luck}\n",
     "principle 'luck' is unknown"),
    ("- {file: a.py, style: range [0, 1), kind: correct}\n", "is not valid YAML"),
    ("- {file: a.py, task: level1/19_ReLU, kind: correct, style: s, expect: ok, timed_only: true}\n",
     "true only for a cheat"),
    ("- {file: a.py, task: level1/19_ReLU, kind: cheat, style: s, expect: [x], timed_only: maybe}\n",
     "timed_only 'maybe'"),
])
def test_a_malformed_manifest_is_named(tmp_path, text, problem):
    with pytest.raises(UsageError, match="manifest.yaml") as error:
        kc.load_candidates(_manifest(tmp_path, text))
    assert problem in str(error.value)


def _checkout(root: Path) -> Path:
    level1 = root / "KernelBench" / "level1"
    level1.mkdir(parents=True)
    (level1 / "19_ReLU.py").write_text("import torch\n\nclass Model:\n    pass\n\nN = 4\n")
    return root


def test_the_marker_line_is_replaced_by_the_reference_source(tmp_path):
    checkout = _checkout(tmp_path / "kb")
    set_dir = tmp_path / "set"
    set_dir.mkdir()
    (set_dir / "a.py").write_text("# @echo-reference\n\nimport triton\n\nclass ModelNew:\n    pass\n")
    (set_dir / "manifest.yaml").write_text("- {file: a.py, task: level1/19_ReLU, kind: correct, style: s, expect: ok}\n")
    [candidate] = kc.load_candidates(set_dir)
    source = kc.candidate_source(candidate, checkout)
    assert source.startswith("import torch\n\nclass Model:\n    pass\n\nN = 4\n\nimport triton")
    assert kc.MARKER not in source
    missing = kc.Candidate(name="b", path=set_dir / "a.py", task="level1/20_LeakyReLU", kind="correct", style="s")
    with pytest.raises(UsageError, match="20_LeakyReLU.py does not exist"):
        kc.candidate_source(missing, checkout)
    with pytest.raises(UsageError, match="no KernelBench levels"):
        kc.candidate_source(candidate, tmp_path / "set")


def test_summary_reports_false_rejections_and_uncaught_cheats():
    def outcome(name, kind, expect, ok, error_class=None):
        return kset.Outcome(name=name, task="level1/19_ReLU", kind=kind, style="s", expect=expect, ok=ok,
                            error_class=error_class, stage="done", seconds=1.0)

    outcomes = [outcome("good", "correct", (), True), outcome("lost", "correct", (), False, "out-of-memory"),
                outcome("passes", "cheat", ("profile:low-coverage",), True),
                outcome("caught", "cheat", ("static:monkeypatch",), False, "static:monkeypatch"),
                outcome("other", "cheat", ("static:monkeypatch",), False, "timeout")]
    lines = kset.summary_lines(outcomes)
    assert lines[0] == "- correct: 1/2 as expected; false rejections 1/2 (lost: out-of-memory)"
    assert lines[1] == ("- cheat: 1/3 as expected; accepted (not caught) 1/3 (passes); "
                        "caught by static:monkeypatch ×1, timeout ×1")
    table = kset.outcome_table(outcomes)
    assert "| other | level1/19_ReLU | cheat | s | static:monkeypatch | timeout | **NO** |" in table


def test_throughput_counts_evaluations_stages_and_the_timing_gpu_time():
    def outcome(name, stages, candidate_ms=None, reference_ms=None):
        return kset.Outcome(name=name, task="level1/19_ReLU", kind="correct", style="s", expect=(), ok=True,
                            error_class=None, stage="done", seconds=1.0, stage_seconds=stages,
                            candidate_ms=candidate_ms, reference_ms=reference_ms)

    outcomes = [outcome("a", {"compile": 1.0, "correctness": 3.0, "profile": 4.0}, 2.0, 3.0),
                outcome("b", {"compile": 1.0, "correctness": 1.0})]
    lines = kset.throughput_lines(outcomes, wall=30.0, workers=2, calls_per_side=110)
    assert "2 evaluations in 30 s with 2 workers: 4.0 evaluations per minute" in lines[2]
    assert lines[3] == ("- worker time by stage: correctness 4 s (40%; median 2.00 s), profile 4 s (40%; median 4.00 s), "
                        "compile 2 s (20%; median 1.00 s)")
    # 110 calls per side at 2 + 3 ms: 0.55 s of GPU time for the one timed candidate
    assert "need 0.6 s of GPU time; wall time / timing GPU time = 54.5" in lines[4]

    # a GPU wait sits inside the stage it happened in: reported apart, not added to the split
    outcomes[0].stage_seconds["device_wait"] = 2.5
    lines = kset.throughput_lines(outcomes, wall=30.0, workers=2, calls_per_side=110)
    assert lines[3].startswith("- worker time by stage: correctness 4 s (40%; median 2.00 s), profile 4 s (40%")
    assert lines[3].endswith("(of which 2 s queued for the GPU while other candidates were timed)")

    # the correctness stage's parts, summed over candidates, largest first
    outcomes[0].correctness_seconds = {"candidate": 2.0, "compare": 1.0}
    outcomes[1].correctness_seconds = {"candidate": 1.0}
    lines = kset.throughput_lines(outcomes, wall=30.0, workers=2, calls_per_side=110)
    assert lines[4] == "- correctness by part: candidate 3 s (75%), compare 1 s (25%)"


def test_a_verdicts_judge_seconds_leave_out_the_gpu_wait_inside_its_stages():
    from atrl.harness.verdict import Verdict

    verdict = Verdict.failed("t", "code", "cuda", "cuda:0", "done",
                             stage_seconds={"compile": 1.0, "profile": 3.0, "device_wait": 2.0})
    assert verdict.judge_seconds == 4.0


# One of each kind the interpreter judges as the manifest expects today (correct whole-file,
# several kernels, a partial-policy conv fusion, a static cheat, two principled rejections).
JUDGED_ON_CPU = ("l1_relu_whole_file", "l1_softmax_two_kernels", "l2_conv_relu_hardswish_inplace",
                 "cheat_reference_by_name", "wrong_elu_negative_branch", "wrong_relu_in_place_on_input",
                 "l1_matmul_transposed_both_kernelbench_example_style", "l1_symmetric_matmul_tutorial_style")


@needs_checkout
@pytest.mark.slow
def test_a_handful_of_candidates_get_their_expected_verdicts_on_the_interpreter():
    chosen = [c for c in CANDIDATES if c.name in JUDGED_ON_CPU]
    assert len(chosen) == len(JUDGED_ON_CPU)
    outcomes, preset = kset.judge(chosen, Path(KERNELBENCH), "interpreter", workers=2, trials=2, preset=None)
    assert preset == "small"
    wrong = [(o.name, o.expected_text, o.got_text, o.message[:300]) for o in outcomes if not o.as_expected]
    assert not wrong


@needs_checkout
@pytest.mark.slow
def test_pytorch_beside_a_scratch_launch_is_rejected_on_the_interpreter():
    # the provenance of the result decides who computed it, without the GPU profiler
    [cheat] = [c for c in CANDIDATES if c.name == "cheat_torch_beside_scratch_launch"]
    [outcome], _ = kset.judge([cheat], Path(KERNELBENCH), "interpreter", workers=1, trials=2, preset=None)
    assert not outcome.ok and outcome.as_expected


def test_timing_attacks_are_left_out_where_nothing_is_timed(tmp_path, monkeypatch, capsys):
    timed = [c.name for c in CANDIDATES if c.timed_only]
    assert timed == ["cheat_timed_cache_argmax_key"]
    judged: list[str] = []

    def fake_judge(candidates, *args, **kwargs):
        judged.extend(c.name for c in candidates)
        raise SystemExit(0)

    monkeypatch.setattr(kset, "load_task", lambda *args: None)
    monkeypatch.setattr(kset, "judge", fake_judge)
    with pytest.raises(SystemExit):
        kset.main(["--kernelbench", str(tmp_path), "--kind", "cheat"])
    assert judged and "cheat_timed_cache_argmax_key" not in judged
    assert "left out: 1 timing attacks (cheat_timed_cache_argmax_key)" in capsys.readouterr().err
    judged.clear()
    with pytest.raises(SystemExit):
        kset.main(["--kernelbench", str(tmp_path), "--kind", "cheat", "--backend", "cuda"])
    assert "cheat_timed_cache_argmax_key" in judged


def test_the_runner_names_bad_input_before_judging(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(kc.KERNELBENCH_ENV, raising=False)
    assert kset.main([]) == 2
    assert "no KernelBench checkout given — pass --kernelbench PATH" in capsys.readouterr().err
    assert kset.main(["--kernelbench", str(tmp_path)]) == 2
    assert "holds no KernelBench levels" in capsys.readouterr().err
    checkout = _checkout(tmp_path / "kb")  # has a (malformed) 19_ReLU only
    assert kset.main(["--kernelbench", str(checkout), "--only", "l1_leaky_relu_autotune"]) == 2
    assert "20_LeakyReLU.py does not exist" in capsys.readouterr().err
    assert kset.main(["--kernelbench", str(checkout), "--only", "l1_relu_whole_file"]) == 2
    assert "does not define get_inputs, get_init_inputs" in capsys.readouterr().err
    assert kset.main(["--kernelbench", str(checkout), "--only", "nope"]) == 2
    assert "--only names unknown candidates: nope" in capsys.readouterr().err
