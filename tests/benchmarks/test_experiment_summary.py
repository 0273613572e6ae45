"""benchmarks/experiment_summary.py on a fake experiment: training runs with hand-written
metrics records (the real `rollout_metrics` keys), eval runs whose metrics.json the real
`atrl.eval.report.write_report` writes (or whose episodes.jsonl alone is there)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from atrl.eval.episodes import EpisodeSummary, TurnOutcome
from atrl.eval.report import write_report
from atrl.jsonio import Journal
from atrl.rl.metrics import rollout_metrics

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "experiment_summary.py"
_spec = importlib.util.spec_from_file_location("experiment_summary", _PATH)
summary = importlib.util.module_from_spec(_spec)
sys.modules["experiment_summary"] = summary
_spec.loader.exec_module(summary)

TIMES = ("time_generation_s", "time_evaluation_s", "time_update_s")


def _run(root: Path, name: str, rewards: list[float], correct: list[float], compactions: list[float],
         times: list[tuple[float, float, float]] | None = None, torn: bool = False) -> None:
    lines = []
    for i, reward in enumerate(rewards):
        record = {"step": i + 1, "lr": 1e-6, **rollout_metrics([])}  # every real key, zeroed
        record |= {"reward_mean": reward, "correct_rate": correct[i], "compactions_per_episode": compactions[i]}
        if times:
            record |= dict(zip(TIMES, times[i], strict=True)) | {"time_step_s": sum(times[i])}
            record["generation_tokens_per_s"] = 1000.0 + 200 * i
        lines.append(json.dumps(record) + "\n")
    (root / name).mkdir()
    (root / name / "metrics.jsonl").write_text("".join(lines) + ('{"step": 99, "reward_m' if torn else ""))


def _ep(task: str, scores: list[float], sample: int = 0) -> EpisodeSummary:
    """Turn score s: compiled when s ≥ 0.1, correct when s ≥ 1, speedup s − 1 when s > 1."""
    turns = [
        TurnOutcome(turn=i, score=s, compiled=s >= 0.1, correct=s >= 1.0, stage="done" if s >= 1 else "correctness",
                    speedup=(s - 1.0) if s > 1.0 else None)
        for i, s in enumerate(scores)
    ]
    return EpisodeSummary(task, 1, sample, turns)


def _episodes(path: Path, episodes: list[EpisodeSummary], report: bool) -> None:
    path.mkdir()
    with Journal(path / "episodes.jsonl") as journal:
        for ep in episodes:
            journal.append(ep)
    if report:
        write_report(path)


def _row(md: str, first: str) -> list[str]:
    rows = [line for line in md.splitlines() if line.startswith(f"| {first} |")]
    assert len(rows) == 1, (first, rows)
    return [cell.strip() for cell in rows[0].strip("|").split("|")]


@pytest.fixture
def experiment(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    root.mkdir()
    _run(root, "atrl-s0", [0.1, 0.2, 0.3, 0.4], [0.0, 0.5, 0.5, 1.0], [0, 1, 1, 2],
         [(10, 2, 5), (12, 2, 6), (11, 2, 7), (30, 2, 8)], torn=True)
    _run(root, "atrl-s1", [0.0, 0.5, 0.7], [0.0, 0.0, 0.3], [0, 0, 0])  # no timing keys
    _run(root, "grpo-s0", [0.2, 0.3], [0.1, 0.2], [0, 0], [(1, 1, 1), (3, 3, 3)])
    # best of turns: compile 3/4, correct 2/4 (speedups 2.0, 0.5); last turn: correct 1/4
    _episodes(root / "eval-atrl-s0", [_ep("t1", [0.1, 3.0]), _ep("t2", [1.5, 0.0]), _ep("t3", [0.0]),
                                      _ep("t4", [0.1])], report=True)
    _episodes(root / "eval-atrl-s1", [_ep("t1", [1.5]), _ep("t2", [4.0])], report=False)  # no metrics.json
    _episodes(root / "eval-heldout-grpo-s0", [_ep("t1", [1.0]), _ep("t2", [0.0])], report=True)  # untimed
    (root / "eval-sft").mkdir()  # not evaluated yet
    return root


def test_summary_tables_plot_and_concatenated_metrics(experiment: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert summary.main(["--runs", str(experiment), "--out", str(out)]) == 0
    md = (out / "summary.md").read_text()

    # run, arm, seed, steps, first, last, last-3 mean, correct mean, compactions, gen, eval, update, tokens/s
    assert _row(md, "atrl-s0") == ["atrl-s0", "atrl", "0", "4", "0.100", "0.400", "0.300", "0.500", "1.00",
                                   "11.5", "2.0", "6.5", "1300"]
    assert _row(md, "atrl-s1") == ["atrl-s1", "atrl", "1", "3", "0.000", "0.700", "0.400", "0.100", "0.00",
                                   "n/a", "n/a", "n/a", "n/a"]
    assert _row(md, "grpo-s0")[3:7] == ["2", "0.200", "0.300", "0.250"]

    # eval, attempts, compile, correct best, correct last, fast_1, geomean speedup, pass@1
    assert _row(md, "eval-atrl-s0") == ["eval-atrl-s0", "4", "0.750", "0.500", "0.250", "0.250", "1.000", "0.500"]
    assert _row(md, "eval-atrl-s1") == ["eval-atrl-s1", "2", "1.000", "1.000", "1.000", "0.500", "1.225", "1.000"]
    assert _row(md, "eval-heldout-grpo-s0")[3:7] == ["0.500", "0.500", "n/a", "n/a"]  # no timing
    assert _row(md, "eval-sft")[1:] == ["n/a"] * 7

    # arm, eval set, seeds, final reward, eval correctness, eval fast_1 (sample std across seeds)
    assert _row(md, "atrl") == ["atrl", "eval", "2", "0.350 ± 0.071 (n=2)", "0.750 ± 0.354 (n=2)",
                                "0.375 ± 0.177 (n=2)"]
    assert _row(md, "grpo") == ["grpo", "heldout", "1", "0.250 ± n/a (n=1)", "0.500 ± n/a (n=1)", "n/a"]

    assert (out / "reward_vs_step.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    records = [json.loads(line) for line in (out / "metrics_all.jsonl").read_text().splitlines()]
    assert [(r["arm"], r["seed"], r["step"]) for r in records] == [
        ("atrl", 0, 1), ("atrl", 0, 2), ("atrl", 0, 3), ("atrl", 0, 4),
        ("atrl", 1, 1), ("atrl", 1, 2), ("atrl", 1, 3), ("grpo", 0, 1), ("grpo", 0, 2),
    ]
    assert records[3]["reward_mean"] == 0.4 and "compile_rate" in records[3]


def test_one_run_without_evals(tmp_path: Path) -> None:
    _run(tmp_path, "drgrpo-s3", [0.5], [1.0], [0.0])
    assert summary.main(["--runs", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "summary.md").read_text()
    assert _row(md, "drgrpo-s3")[3:7] == ["1", "0.500", "0.500", "0.500"]
    assert _row(md, "drgrpo") == ["drgrpo", "n/a", "1", "0.500 ± n/a (n=1)", "n/a", "n/a"]
    assert "No `eval-*` directories." in md
    assert (tmp_path / "out" / "reward_vs_step.png").exists()


def test_no_run_directories_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "eval-sft").mkdir()
    assert summary.main(["--runs", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no training run directories" in err
    assert not (tmp_path / "out").exists()
