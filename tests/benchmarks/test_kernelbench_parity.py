"""benchmarks/kernelbench_parity.py without a GPU: the verdict labels, the classification of
disagreements, the summary and tables on fake verdicts, the LLM-client stubs, the wrong variants,
and the one-process-per-candidate protocol against a fake `kernelbench.eval`."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
_spec = importlib.util.spec_from_file_location("kernelbench_parity", BENCHMARKS / "kernelbench_parity.py")
parity = importlib.util.module_from_spec(_spec)
sys.modules["kernelbench_parity"] = parity
_spec.loader.exec_module(parity)

Row, Side = parity.Row, parity.Side


def row(name: str, should_pass: bool, ours: tuple[bool, str], theirs: bool, principle: str | None = None,
        expect: tuple[str, ...] = (), ours_s: float = 1.0, theirs_s: float = 40.0) -> Row:
    return Row(name=name, task="level1/19_ReLU", kind="correct" if should_pass else "cheat",
               should_pass=should_pass, expect=() if should_pass else (expect or ("correctness:mismatch",)),
               principle=principle, ours=Side(ours[0], ours[1], ours_s),
               theirs=Side(theirs, "correct" if theirs else "output-mismatch", theirs_s))


ACCEPTED = (True, "accepted")


def test_agreement_is_agree_whatever_the_truth():
    assert parity.classify(row("a", True, ACCEPTED, True)) == "agree"
    assert parity.classify(row("b", False, (False, "correctness:mismatch"), False)) == "agree"


def test_we_accept_what_they_reject():
    assert parity.classify(row("correct", True, ACCEPTED, False)) == "theirs wrong"
    assert parity.classify(row("cheat", False, ACCEPTED, False)) == "ours wrong"


def test_we_reject_what_they_accept():
    # a correct kernel we reject: ours wrong
    assert parity.classify(row("c", True, (False, "out-of-memory"), True)) == "ours wrong"
    # a cheat they accept: theirs wrong
    assert parity.classify(row("d", False, (False, "profile:low-coverage"), True)) == "theirs wrong"
    # a principled rule, applied by one of the candidate's expected classes
    tf32 = row("e", False, (False, "correctness:precision"), True, principle="precision-downgrade",
               expect=("correctness:precision", "correctness:mismatch"))
    assert parity.classify(tf32) == "principled: precision-downgrade"
    # the same candidate rejected by a class its principle does not explain is not principled
    other = row("f", False, (False, "timeout"), True, principle="precision-downgrade",
                expect=("correctness:precision",))
    assert parity.classify(other) == "theirs wrong"


def test_agreement_notes_name_what_agreement_hides():
    assert parity.agreement_notes(row("a", True, (False, "timeout"), False)) == "both reject a correct kernel"
    assert parity.agreement_notes(row("b", False, ACCEPTED, True)) == "both accept a bad kernel"
    assert parity.agreement_notes(row("c", True, ACCEPTED, True)) == ""
    assert parity.agreement_notes(row("d", True, ACCEPTED, False)) == ""  # a disagreement has a class instead


def test_summary_counts_and_times_only_agreed_candidates():
    rows = [row("a", True, ACCEPTED, True, ours_s=1.0, theirs_s=40.0),
            row("b", True, ACCEPTED, True, ours_s=3.0, theirs_s=50.0),
            row("c", False, (False, "correctness:mismatch"), False, ours_s=2.0, theirs_s=60.0),
            row("d", False, (False, "profile:low-coverage"), True, ours_s=100.0, theirs_s=1.0),
            row("e", True, ACCEPTED, False)]
    s = parity.summary(rows)
    assert (s["candidates"], s["agree"], s["agreement_rate"]) == (5, 3, 0.6)
    assert s["disagreements"] == {"theirs wrong": 2}
    t = s["agreed_seconds"]
    assert (t["ours_median"], t["theirs_median"]) == (2.0, 50.0)
    assert t["median_ratio_theirs_over_ours"] == 25.0
    assert t["total_ratio_theirs_over_ours"] == 25.0  # 150 / 6: d and e are left out
    # a row where KernelBench's evaluator ran out of memory beside the others counts for nothing
    lost = row("f", True, ACCEPTED, False)
    lost.theirs.label = parity.THEIRS_OOM
    with_lost = parity.summary([*rows, lost])
    assert with_lost == s | {"evaluator_out_of_memory": 1}
    assert "left out: 1 candidates where KernelBench's evaluator ran out of" in parity.markdown([*rows, lost], "c", "g")
    assert "ours_without_gpu_queue_median" not in t  # judged one at a time: nothing queued


def test_a_set_runs_gpu_queueing_is_reported_apart():
    rows = [row("a", True, ACCEPTED, True, ours_s=6.0, theirs_s=40.0),
            row("b", True, ACCEPTED, True, ours_s=3.0, theirs_s=60.0)]
    rows[0].ours.detail["stage_seconds"] = {"compile": 5.0, "correctness": 1.0, "device_wait": 4.0}
    t = parity.summary(rows)["agreed_seconds"]
    assert (t["ours_median"], t["median_ratio_theirs_over_ours"]) == (4.5, 11.11)
    assert (t["ours_without_gpu_queue_median"], t["median_ratio_without_gpu_queue"]) == (2.5, 20.0)
    assert t["total_ratio_without_gpu_queue"] == 20.0  # 100 / 5
    assert "less the harness's GPU queueing" in parity.markdown(rows, "c", "g")


def test_markdown_and_records_carry_every_row():
    rows = [row("a", True, ACCEPTED, True), row("d", False, (False, "profile:low-coverage"), True)]
    text = parity.markdown(rows, "python benchmarks/kernelbench_parity.py", "fake GPU")
    assert "agreement: 1/2 (50%)" in text and "disagreement, theirs wrong: 1" in text
    assert "| d | level1/19_ReLU | cheat | profile:low-coverage | accepted | theirs wrong |" in text
    recs = parity.records(rows)
    assert [r["class"] for r in recs] == ["agree", "theirs wrong"]
    assert parity.rows_from_records(json.loads(json.dumps(recs))) == rows  # what --resume reads back


@pytest.mark.parametrize(("result", "expected"), [
    ({"compiled": True, "correctness": True}, (True, "correct")),
    ({"compiled": False, "correctness": False, "metadata": {"compilation_error": "x"}}, (False, "compile-error")),
    ({"compiled": True, "correctness": False, "metadata": {"runtime_error": "boom"}}, (False, "runtime-error")),
    ({"compiled": True, "correctness": False,
      "metadata": {"correctness_issue": "Output shape mismatch: Expected [2], got [3]"}}, (False, "shape-mismatch")),
    ({"compiled": True, "correctness": False, "metadata": {"correctness_issue": "Output mismatch"}},
     (False, "output-mismatch")),
    ({"worker_error": "timed out after 5 s"}, (False, "evaluator-error: timed out after 5 s")),
    ({"compiled": True, "correctness": False,
      "metadata": {"runtime_error": "CUDA out of memory. Tried to allocate 6.00 GiB."}}, (False, parity.THEIRS_OOM)),
])
def test_kernelbench_label(result, expected):
    assert parity.kernelbench_label(result) == expected


def test_llm_client_stubs_import_and_refuse_to_be_called(monkeypatch):
    for name in parity.LLM_CLIENT_STUBS:
        monkeypatch.delitem(sys.modules, name, raising=False)
    parity.stub_llm_clients()
    from dotenv import load_dotenv
    from litellm import completion

    load_dotenv()  # called at import time by KernelBench's utils: must be harmless
    with pytest.raises(RuntimeError, match="LLM client"):
        completion(model="x")


def _fake_checkout(root: Path, result: dict, trials: int = 3) -> Path:
    """A checkout with one level-1 task and a `kernelbench.eval` that returns `result` when called
    as the parity script calls it, with `trials` correctness trials."""
    level1 = root / "KernelBench" / "level1"
    level1.mkdir(parents=True)
    (level1 / "19_ReLU.py").write_text(textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def forward(self, x):
                return torch.relu(x)


        batch_size = 16
        dim = 64


        def get_inputs():
            return [torch.rand(batch_size, dim)]


        def get_init_inputs():
            return []
        """))
    package = root / "src" / "kernelbench"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "eval.py").write_text(textwrap.dedent(f"""\
        from litellm import completion  # stubbed by the parity script: not installed here

        class Result:
            def model_dump(self):
                data = {result!r}
                data.setdefault("metadata", {{}})["compilation_error"] = ValueError("not JSON")
                return data

        def eval_kernel_against_ref(original_model_src, custom_model_src, **kwargs):
            assert "class Model" in original_model_src and "ModelNew" in custom_model_src
            assert kwargs["backend"] == "triton" and kwargs["num_correct_trials"] == {trials}
            print("noise KernelBench prints")
            return Result()
        """))
    return root


def test_run_theirs_reads_the_result_from_a_fresh_process(tmp_path):
    checkout = _fake_checkout(tmp_path, {"compiled": True, "correctness": False,
                                         "metadata": {"correctness_issue": "Output mismatch"}})
    side = parity.run_theirs("class ModelNew: pass", "class Model: pass", checkout, trials=3, perf_trials=2,
                             timeout=120)
    assert (side.ok, side.label) == (False, "output-mismatch") and side.seconds > 0
    assert side.detail["correctness_issue"] == "Output mismatch" and side.detail["compilation_error"] == "not JSON"


def test_run_theirs_reports_a_dead_evaluator(tmp_path):
    checkout = _fake_checkout(tmp_path, {})
    (checkout / "src" / "kernelbench" / "eval.py").write_text("raise SystemExit('evaluator cannot start')\n")
    side = parity.run_theirs("class ModelNew: pass", "class Model: pass", checkout, 3, 2, timeout=120)
    assert not side.ok and side.label == "evaluator-error: evaluator cannot start"


def test_wrong_variants_follow_the_correct_candidates(tmp_path):
    from kernelbench_candidates import PLUS_ONE_EXPECT, load_candidates, with_wrong_variants

    checkout = _fake_checkout(tmp_path / "kb", {})
    set_dir = tmp_path / "set"
    set_dir.mkdir()
    source = (BENCHMARKS.parent / "tests" / "data" / "kernelbench_candidates" / "l1_relu_whole_file.py").read_text()
    (set_dir / "relu.py").write_text(source)
    (set_dir / "cheat.py").write_text(source)
    (set_dir / "manifest.yaml").write_text(
        "- {file: relu.py, task: level1/19_ReLU, kind: correct, style: s, expect: ok}\n"
        "- {file: cheat.py, task: level1/19_ReLU, kind: cheat, style: s, expect: [static:pytorch-compute]}\n")
    pairs = with_wrong_variants(load_candidates(set_dir), checkout, count=5)
    assert [c.name for c, _ in pairs] == ["relu", "cheat", "relu+1"]  # cheats get no variant
    variant, code = pairs[-1]
    assert variant.expect == PLUS_ONE_EXPECT and not variant.should_pass
    assert "+ 1" in code and "batch_size = 16" in code  # the echoed reference was filled in first


def test_plus_one_reaches_every_store():
    from atrl.tasks.mutations import plus_one_variant

    source = "def k(p, x, EVEN):\n    if EVEN:\n        tl.store(p, x)\n    else:\n        tl.store(p, x, mask=m)\n"
    assert plus_one_variant(source).count("tl.store(p, x + 1") == 2  # the branch taken may be either
    assert plus_one_variant("def f():\n    return 1\n") is None


def test_a_bad_checkout_is_named(capsys, tmp_path):
    assert parity.main(["--kernelbench", str(tmp_path)]) == 2
    assert f"{tmp_path}/src/kernelbench/eval.py does not exist" in capsys.readouterr().err


def test_without_cuda_the_script_says_so(monkeypatch, capsys, tmp_path):
    import torch

    checkout = _fake_checkout(tmp_path, {})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("kernelbench", "kernelbench.eval", *parity.LLM_CLIENT_STUBS):
        monkeypatch.delitem(sys.modules, name, raising=False)
    try:
        assert parity.main(["--kernelbench", str(checkout), "--out", str(tmp_path / "out")]) == 2
    finally:
        for name in ("kernelbench", "kernelbench.eval"):
            sys.modules.pop(name, None)
    assert "no CUDA GPU is visible: KernelBench's evaluator runs on CUDA only" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


SET_RELU = "- {file: relu.py, task: level1/19_ReLU, kind: correct, style: s, expect: ok}\n"
SET_TIMER = "- {file: timer.py, task: level1/19_ReLU, kind: cheat, style: s, expect: [static:monkeypatch]}\n"


def _small_set(root: Path, manifest: str) -> Path:
    """A candidate set of the set's relu kernel (and its timer cheat, when the manifest lists it)."""
    root.mkdir()
    data = BENCHMARKS.parent / "tests" / "data" / "kernelbench_candidates"
    (root / "relu.py").write_text((data / "l1_relu_whole_file.py").read_text())
    (root / "timer.py").write_text((data / "cheat_patch_timer.py").read_text())
    (root / "manifest.yaml").write_text(manifest)
    return root


@pytest.mark.slow
@pytest.mark.parametrize("ours_first", [False, True])
def test_one_command_judges_both_sides_writes_reports_and_resumes(monkeypatch, tmp_path, ours_first):
    checkout = _fake_checkout(tmp_path / "kb", {"compiled": True, "correctness": True}, trials=2)
    set_dir = _small_set(tmp_path / "set", SET_RELU + SET_TIMER)
    monkeypatch.setattr(parity, "OUR_BACKEND", "interpreter")
    monkeypatch.setattr(parity, "require_cuda", lambda: "fake GPU")
    monkeypatch.setattr(sys, "path", list(sys.path))
    out = tmp_path / "out"
    argv = ["--kernelbench", str(checkout), "--set", str(set_dir), "--out", str(out), "--trials", "2",
            "--wrong-variants", "1"] + (["--ours-first"] if ours_first else [])
    try:
        assert parity.main(argv) == 0
        first = json.loads((out / "parity.json").read_text())
        if ours_first:  # the harness's verdicts were kept apart first, the same ones the rows carry
            kept = json.loads((out / "ours.json").read_text())
            assert {name: side["label"] for name, side in kept.items()} == {
                r["name"]: r["ours"]["label"] for r in first["rows"]}
        assert [(r["name"], r["ours"]["label"], r["class"]) for r in first["rows"]] == [
            ("relu", "accepted", "agree"), ("timer", "static:monkeypatch", "theirs wrong"),
            ("relu+1", "correctness:mismatch", "theirs wrong")]
        assert first["summary"]["agree"] == 1 and "agreement: 1/3" in (out / "parity.md").read_text()
        # a resumed run keeps what was judged: the evaluator now rejects everything, yet nothing changes
        (checkout / "src" / "kernelbench" / "eval.py").write_text("raise SystemExit('not called')\n")
        assert parity.main([*argv, "--resume"]) == 0
        assert json.loads((out / "parity.json").read_text())["rows"] == first["rows"]
    finally:
        for name in ("kernelbench", "kernelbench.eval"):
            sys.modules.pop(name, None)


def test_ours_from_a_set_run_takes_its_verdicts_and_names_a_missing_candidate(monkeypatch, tmp_path, capsys):
    checkout = _fake_checkout(tmp_path / "kb", {"compiled": True, "correctness": True}, trials=2)
    set_dir = _small_set(tmp_path / "set", SET_RELU)
    monkeypatch.setattr(parity, "require_cuda", lambda: "fake GPU")
    monkeypatch.setattr(sys, "path", list(sys.path))

    def no_harness(*args, **kwargs):
        raise AssertionError("the harness must not judge again")

    monkeypatch.setattr(parity, "run_ours", no_harness)
    set_run = tmp_path / "set.json"
    set_run.write_text(json.dumps([{"name": "relu", "ok": False, "error_class": "correctness:mismatch", "seconds": 3.5,
                                    "stage_seconds": {"correctness": 2.0}, "message": "differs"}]))
    out = tmp_path / "out"
    argv = ["--kernelbench", str(checkout), "--set", str(set_dir), "--out", str(out), "--trials", "2",
            "--wrong-variants", "0", "--ours-from", str(set_run)]
    try:
        assert parity.main(argv) == 0
        (row,) = json.loads((out / "parity.json").read_text())["rows"]
        assert (row["ours"]["label"], row["ours"]["seconds"], row["class"]) == ("correctness:mismatch", 3.5, "ours wrong")
        # a row whose KernelBench evaluation ran out of memory is judged again on --resume
        saved = json.loads((out / "parity.json").read_text())
        saved["rows"][0]["theirs"]["label"] = parity.THEIRS_OOM
        (out / "parity.json").write_text(json.dumps(saved))
        assert parity.main([*argv, "--resume"]) == 0
        (row,) = json.loads((out / "parity.json").read_text())["rows"]
        assert row["theirs"]["label"] == "correct"
        set_run.write_text("[]")
        assert parity.main([*argv[:-2], "--out", str(tmp_path / "out2"), "--ours-from", str(set_run)]) == 2
        assert "has no verdict for 1 candidates (relu" in capsys.readouterr().err
        assert parity.main([*argv[:-2], "--out", str(tmp_path / "out3"), "--ours-from", str(set_run),
                            "--only", "relu"]) == 2
        assert "with --only, variants are made from the first correct candidates" in capsys.readouterr().err
    finally:
        for name in ("kernelbench", "kernelbench.eval"):
            sys.modules.pop(name, None)


def test_a_resumed_run_takes_the_harness_side_of_kept_rows_from_a_newer_set_run(monkeypatch, tmp_path):
    checkout = _fake_checkout(tmp_path / "kb", {"compiled": True, "correctness": True}, trials=2)
    set_dir = _small_set(tmp_path / "set", SET_RELU)
    monkeypatch.setattr(parity, "require_cuda", lambda: "fake GPU")
    monkeypatch.setattr(sys, "path", list(sys.path))
    set_run = tmp_path / "set.json"

    def write_set_run(ok: bool, seconds: float) -> None:
        set_run.write_text(json.dumps([{"name": "relu", "ok": ok, "error_class": None if ok else "correctness:mismatch",
                                        "seconds": seconds, "stage_seconds": {}, "message": ""}]))

    out = tmp_path / "out"
    argv = ["--kernelbench", str(checkout), "--set", str(set_dir), "--out", str(out), "--trials", "2",
            "--wrong-variants", "0", "--ours-from", str(set_run), "--resume"]
    try:
        write_set_run(ok=False, seconds=9.0)
        assert parity.main(argv) == 0
        (first,) = json.loads((out / "parity.json").read_text())["rows"]
        assert first["class"] == "ours wrong"
        # KernelBench's side is kept (its evaluator is not called again); ours follows the new set run
        (checkout / "src" / "kernelbench" / "eval.py").write_text("raise SystemExit('not called')\n")
        write_set_run(ok=True, seconds=2.5)
        assert parity.main(argv) == 0
        (row,) = json.loads((out / "parity.json").read_text())["rows"]
        assert row["theirs"] == first["theirs"]
        assert (row["ours"]["label"], row["ours"]["seconds"], row["class"]) == ("accepted", 2.5, "agree")
    finally:
        for name in ("kernelbench", "kernelbench.eval"):
            sys.modules.pop(name, None)
