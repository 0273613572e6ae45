import json

import pytest

from atrl.errors import UsageError
from atrl.eval.episodes import EpisodeSummary, TurnOutcome, success_by_turn, to_attempts
from atrl.eval.report import write_report
from atrl.jsonio import Journal


def _ep(task, sample, outcomes, compactions=0, level=1, backend="interpreter"):
    """An episode whose turns score `outcomes`: ≥ 1 correct (speedup score − 1 when above 1),
    0.1 compiled but wrong, else rejected statically."""
    turns = [
        TurnOutcome(turn=i, score=s, compiled=s >= 0.1, correct=s >= 1.0,
                    stage="done" if s >= 1 else ("correctness" if s >= 0.1 else "static"),
                    error_class=None if s >= 1 else ("correctness:mismatch" if s >= 0.1 else "static:no-triton-kernel"),
                    speedup=(s - 1.0) if s > 1.0 else None)
        for i, s in enumerate(outcomes)
    ]
    return EpisodeSummary(task, level, sample, turns, segments=compactions + 1, compactions=compactions,
                          backend=backend, timed=backend == "cuda")


def test_best_and_last_turn_differ_when_a_later_turn_regresses():
    ep = _ep("t", 0, [0.1, 2.5, 0.0])
    assert to_attempts([ep], "best")[0].correct
    assert not to_attempts([ep], "last")[0].correct
    assert to_attempts([ep], "best")[0].speedup == pytest.approx(1.5)


def test_success_by_turn_is_cumulative():
    eps = [_ep("a", 0, [0.0, 1.0]), _ep("b", 0, [1.0]), _ep("c", 0, [0.0, 0.0])]
    assert success_by_turn(eps) == pytest.approx([1 / 3, 2 / 3])


def test_report_for_an_untimed_run_marks_timing_not_available(tmp_path):
    with Journal(tmp_path / "episodes.jsonl") as j:
        j.append(_ep("builtin/relu", 0, [1.0], compactions=1))
        j.append(_ep("builtin/gelu", 0, [0.1, 0.0]))
    report = write_report(tmp_path).read_text()
    assert "| correctness | 50.0% | 50.0% |" in report
    assert "| fast_1 | n/a (not timed on interpreter) | n/a (not timed on interpreter) |" in report
    assert (tmp_path / "success_by_turn.png").exists()
    assert not (tmp_path / "fast_p.png").exists()
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["best_of_turns"]["compile_rate"] == 1.0


def test_report_for_a_timed_run_has_fast_p_and_plots(tmp_path):
    with Journal(tmp_path / "episodes.jsonl") as j:
        j.append(_ep("t1", 0, [3.0], backend="cuda"))  # speedup 2.0
        j.append(_ep("t2", 0, [1.5], backend="cuda"))  # speedup 0.5
        j.append(_ep("t3", 0, [0.0], backend="cuda"))
    report = write_report(tmp_path).read_text()
    assert "| fast_1 | 33.3% | 33.3% |" in report
    assert (tmp_path / "fast_p.png").exists()


def test_report_on_a_missing_run_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="episodes.jsonl"):
        write_report(tmp_path)


def _metrics_and_report(run_dir, episodes):
    run_dir.mkdir()
    with Journal(run_dir / "episodes.jsonl") as j:
        for ep in episodes:
            j.append(ep)
    report = write_report(run_dir).read_text()
    return json.loads((run_dir / "metrics.json").read_text()), report


def _cli_table_cell(metrics, label):
    """The best-of-turns cell of row `label` in `atrl eval`'s results table, as printed."""
    from rich.console import Console

    from atrl.cli.eval import _results_table

    console = Console(width=300, record=True)
    console.print(_results_table(metrics))
    row = next(line for line in console.export_text().splitlines() if f" {label} " in line)
    return [cell.strip() for cell in row.split("│")][2]


def test_speed_metrics_read_the_same_n_a_on_an_untimed_backend_whether_or_not_anything_was_correct(tmp_path):
    metrics_a, report_a = _metrics_and_report(tmp_path / "a", [_ep("builtin/relu", 0, [0.1, 0.0])])
    metrics_b, report_b = _metrics_and_report(tmp_path / "b", [_ep("builtin/relu", 0, [0.1, 1.0])])
    not_timed = "n/a (not timed on interpreter)"
    for metrics, report in ((metrics_a, report_a), (metrics_b, report_b)):
        for key in ("fast_0", "fast_1", "fast_2_ge", "speedup_geomean", "speedup_geomean_failures_as_1x",
                    "npu_accept_0.6"):
            assert metrics["best_of_turns"][key] == not_timed, key
            assert metrics["last_turn"][key] == not_timed, key
        assert metrics["by_level"]["1"]["fast_1"] == not_timed
        assert metrics["by_task"][0]["best_speedup"] == not_timed
        assert f"| fast_1 | {not_timed} | {not_timed} |" in report
        assert f"| geomean speedup (correct) | {not_timed} | {not_timed} |" in report
        assert _cli_table_cell(metrics, "fast_1") == not_timed
        assert _cli_table_cell(metrics, "geomean speedup") == not_timed
    assert metrics_a["best_of_turns"]["correctness"] == 0.0 and metrics_b["best_of_turns"]["correctness"] == 1.0


def test_on_a_timed_backend_no_correct_attempt_is_zero_fast_p_and_speedups_say_why_they_are_missing(tmp_path):
    metrics, report = _metrics_and_report(tmp_path / "run", [_ep("builtin/relu", 0, [0.1], backend="cuda")])
    assert metrics["timed"] is True and metrics["best_of_turns"]["fast_1"] == 0.0
    assert metrics["best_of_turns"]["speedup_geomean"] == "n/a (no correct attempt)"
    assert "| fast_1 | 0.0% | 0.0% |" in report
    assert _cli_table_cell(metrics, "fast_1") == "0.0%"


def test_run_timing_names_the_untimed_backends_and_infers_timing_of_unrecorded_episodes():
    from dataclasses import replace

    from atrl.eval.availability import run_timing

    mixed = run_timing([_ep("a", 0, [2.0], backend="cuda"), _ep("b", 0, [1.0])])
    assert (mixed.timed, mixed.backends, mixed.not_timed) == (False, ("cuda", "interpreter"),
                                                               "n/a (not timed on interpreter)")
    unrecorded = [replace(_ep("a", 0, [1.0]), backend="", timed=None)]
    assert run_timing(unrecorded, "interpreter").not_timed == "n/a (not timed on interpreter)"
    with_speedup = [replace(_ep("a", 0, [2.5]), backend="", timed=None)]
    assert run_timing(with_speedup, "cuda").timed is True


def test_the_per_task_table_counts_episodes_first_correct_turns_and_furthest_stages(tmp_path):
    episodes = [
        _ep("builtin/relu", 0, [0.0, 0.1, 1.0], compactions=1),
        _ep("builtin/relu", 1, [0.1, 0.1]),
        _ep("builtin/add", 0, [0.0]),
        _ep("builtin/add", 1, [0.0, 0.0], compactions=2),
    ]
    metrics, report = _metrics_and_report(tmp_path / "run", episodes)
    rows = {r["task_id"]: r for r in metrics["by_task"]}
    assert [r["task_id"] for r in metrics["by_task"]] == ["builtin/add", "builtin/relu"]
    assert {k: rows["builtin/relu"][k] for k in ("episodes", "turns", "compiled", "correct", "first_correct_turn",
                                                 "furthest_stage", "compactions")} == \
        {"episodes": 2, "turns": 5, "compiled": 2, "correct": 1, "first_correct_turn": 3, "furthest_stage": "done",
         "compactions": 1}
    assert (rows["builtin/add"]["compiled"], rows["builtin/add"]["first_correct_turn"],
            rows["builtin/add"]["furthest_stage"]) == (0, None, "static")
    na = "n/a (not timed on interpreter)"
    assert f"| builtin/relu | 1 | 2 | 5 | 2/2 | 1/2 | 3 | {na} | done | 1 |" in report
    assert f"| builtin/add | 1 | 2 | 3 | 0/2 | 0/2 | — | {na} | static | 2 |" in report


def test_the_verdict_cascade_counts_every_candidate_that_reached_each_stage():
    from atrl.eval.breakdown import verdict_cascade

    stages = ["format", "static", "compile", "correctness", "correctness", "profile", "done", "done"]
    ep = EpisodeSummary("t", 1, 0, [TurnOutcome(i, 0.0, False, False, s) for i, s in enumerate(stages)])
    timed = verdict_cascade([ep], timed=True)
    assert [(s.stage, s.count) for s in timed] == [("format", 8), ("static", 7), ("compile", 6), ("correctness", 5),
                                                  ("profile", 3), ("done", 2)]
    untimed = verdict_cascade([ep], timed=False)
    assert [s.stage for s in untimed] == ["format", "static", "compile", "correctness", "done"]
    assert untimed[-1].label == "done (correct)"


def test_report_shows_the_cascade_as_a_table_and_a_picture(tmp_path):
    _, report = _metrics_and_report(tmp_path / "run", [_ep("builtin/relu", 0, [0.0, 0.1, 1.0])])
    assert "| reached compile (passed static) | 2 | 66.7% |" in report
    assert "![cascade.png](cascade.png)" in report and (tmp_path / "run" / "cascade.png").exists()


def test_a_run_of_the_untrained_default_model_that_solved_nothing_says_why(tmp_path):
    from atrl.cli.eval import zero_correct_hint

    nothing, _ = _metrics_and_report(tmp_path / "a", [_ep("builtin/relu", 0, [0.0, 0.0])])
    solved, _ = _metrics_and_report(tmp_path / "b", [_ep("builtin/relu", 0, [0.1, 1.0])])
    hint = zero_correct_hint("smollm2-135m", nothing)
    assert hint is not None and "--policy reference" in hint and "hf:DIR" in hint
    assert zero_correct_hint("smollm2-135m", solved) is None
    assert zero_correct_hint("hf:runs/sft/model", nothing) is None  # a trained model's 0% is news
    adapter_hint = zero_correct_hint("smollm2-135m-triton", nothing)
    assert adapter_hint is not None and "docs/default-adapter.md" in adapter_hint


def test_best_of_turns_prefers_the_turn_that_got_further_when_scores_tie():
    # both turns score 0: the second compiled (wrong values), the first did not; best of turns
    # must not report a lower compile rate than the last turn
    from atrl.eval.episodes import EpisodeSummary, TurnOutcome, to_attempts

    ep = EpisodeSummary(task_id="builtin/relu", level=1, sample=0, turns=[
        TurnOutcome(turn=0, score=0.0, compiled=False, correct=False, stage="static", error_class="static:syntax"),
        TurnOutcome(turn=1, score=0.0, compiled=True, correct=False, stage="correctness",
                    error_class="correctness:mismatch")])
    assert ep.best_turn().turn == 1
    [best], [last] = to_attempts([ep], "best"), to_attempts([ep], "last")
    assert best.compiled and last.compiled
    tie = EpisodeSummary(task_id="builtin/relu", level=1, sample=1, turns=[
        TurnOutcome(turn=0, score=0.0, compiled=True, correct=False, stage="correctness"),
        TurnOutcome(turn=1, score=0.0, compiled=True, correct=False, stage="correctness")])
    assert tie.best_turn().turn == 0  # the same stage: the earliest


def test_the_report_says_how_often_later_turns_repair_a_wrong_kernel_and_keep_a_right_one(tmp_path):
    episodes = [
        _ep("builtin/relu", 0, [0.1, 1.0]),   # wrong, then repaired
        _ep("builtin/relu", 1, [0.0, 0.1]),   # wrong twice
        _ep("builtin/gelu", 0, [1.5, 0.1]),   # right, then broken (best of turns still counts it right)
        _ep("builtin/gelu", 1, [1.2, 1.3]),   # right, kept
        _ep("builtin/gelu", 2, [1.0]),        # one turn: no later turn to judge
    ]
    metrics, report = _metrics_and_report(tmp_path / "run", episodes)
    assert metrics["later_turns"] == {"wrong_first": 2, "repaired": 1, "right_first": 2, "kept": 1}
    assert "first turn wrong, a later turn correct (repaired): 1/2 (50%)" in report
    assert "first turn correct, second turn correct too (kept): 1/2 (50%)" in report
    _, single = _metrics_and_report(tmp_path / "one", [_ep("builtin/relu", 0, [1.0])])
    assert "Turns after the first" not in single


def test_the_report_says_which_turns_the_judge_could_not_judge(tmp_path):
    unjudgeable = _ep("kernelbench/level2/34_ConvTranspose3d_LayerNorm_GELU_Scaling", 0, [0.0])
    unjudgeable.turns[0].error_class, unjudgeable.turns[0].stage = "task:reference-error", "compile"
    _, report = _metrics_and_report(tmp_path / "run", [unjudgeable, _ep("builtin/relu", 0, [1.0])])
    assert "- not judged: 1 turn of 1 task (task:reference-error ×1)" in report
    assert "34_ConvTranspose3d_LayerNorm_GELU_Scaling" in report.split("## Metrics")[0]
    _, plain = _metrics_and_report(tmp_path / "plain", [_ep("builtin/relu", 0, [0.1, 1.0])])
    assert "not judged" not in plain
