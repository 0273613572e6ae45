import json

import pytest

from atrl.errors import UsageError
from atrl.eval.episodes import EpisodeSummary, TurnOutcome, success_by_turn, to_attempts
from atrl.eval.report import write_report
from atrl.jsonio import Journal


def _ep(task, sample, outcomes, compactions=0, level=1):
    turns = [
        TurnOutcome(turn=i, score=s, compiled=s >= 0.1, correct=s >= 1.0, stage="done" if s >= 1 else "correctness",
                    speedup=(s - 1.0) if s > 1.0 else None)
        for i, s in enumerate(outcomes)
    ]
    return EpisodeSummary(task, level, sample, turns, segments=compactions + 1, compactions=compactions)


def test_best_and_last_turn_differ_when_a_later_turn_regresses():
    ep = _ep("t", 0, [0.1, 2.5, 0.0])
    assert to_attempts([ep], "best")[0].correct
    assert not to_attempts([ep], "last")[0].correct
    assert to_attempts([ep], "best")[0].speedup == pytest.approx(1.5)


def test_success_by_turn_is_cumulative():
    eps = [_ep("a", 0, [0.0, 1.0]), _ep("b", 0, [1.0]), _ep("c", 0, [0.0, 0.0])]
    assert success_by_turn(eps) == pytest.approx([1 / 3, 2 / 3])


def test_report_for_an_untimed_run_marks_timing_unavailable(tmp_path):
    with Journal(tmp_path / "episodes.jsonl") as j:
        j.append(_ep("builtin/relu", 0, [1.0], compactions=1))
        j.append(_ep("builtin/gelu", 0, [0.1, 0.0]))
    report = write_report(tmp_path).read_text()
    assert "| correctness | 50.0% | 50.0% |" in report
    assert "| fast_1 | unavailable | unavailable |" in report
    assert (tmp_path / "success_by_turn.png").exists()
    assert not (tmp_path / "fast_p.png").exists()
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["best_of_turns"]["compile_rate"] == 1.0


def test_report_for_a_timed_run_has_fast_p_and_plots(tmp_path):
    with Journal(tmp_path / "episodes.jsonl") as j:
        j.append(_ep("t1", 0, [3.0]))  # speedup 2.0
        j.append(_ep("t2", 0, [1.5]))  # speedup 0.5
        j.append(_ep("t3", 0, [0.0]))
    report = write_report(tmp_path).read_text()
    assert "| fast_1 | 33.3% | 33.3% |" in report
    assert (tmp_path / "fast_p.png").exists()


def test_report_on_a_missing_run_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="episodes.jsonl"):
        write_report(tmp_path)
