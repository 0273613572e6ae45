"""benchmarks/credit_tier3_summary.py on fake tier-3 runs and evaluations whose answer is known."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "credit_tier3_summary.py"
_spec = importlib.util.spec_from_file_location("credit_tier3_summary", _PATH)
summary = importlib.util.module_from_spec(_spec)
sys.modules["credit_tier3_summary"] = summary
_spec.loader.exec_module(summary)

TASKS = [f"level1/t{i}" for i in range(6)]


def _run(root: Path, name: str, rewards: list[float], later_zero: int) -> None:
    """A training run: its reward curve; per step two later segments, `later_zero` of them with return 0."""
    run = root / name
    run.mkdir(parents=True)
    lines = [json.dumps({"step": i + 1, "reward_mean": r, "multi_segment_fraction": 1.0, "rows_seg1": 2.0,
                         "adv_seg1_mean": -0.1, "later_segments": 2.0, "later_zero_return_segments": later_zero})
             + "\n" for i, r in enumerate(rewards)]
    (run / "metrics.jsonl").write_text("".join(lines))


def _eval(root: Path, name: str, solved: dict[str, int], samples: int = 4, repaired: int = 0) -> None:
    """Held-out episodes: `solved[task]` of `samples` right at the first turn; of the wrong ones,
    the first `repaired` (over all tasks) right at the second."""
    out = root / "t3-eval" / name
    out.mkdir(parents=True)
    records, left = [], repaired
    for task in TASKS:
        for sample in range(samples):
            first = sample < solved.get(task, 0)
            second = first or left > 0
            left -= (not first) and left > 0
            turns = [{"turn": t, "score": float(ok), "compiled": True, "correct": ok, "stage": "done"}
                     for t, ok in enumerate((first, second))]
            records.append({"task_id": task, "level": 1, "sample": sample, "turns": turns, "segments": 2})
    (out / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture
def root(tmp_path):
    for seed in range(3):
        _run(tmp_path, f"t3-seg-s{seed}", [0.2, 0.4 + 0.01 * seed, 0.6], later_zero=1)
        _run(tmp_path, f"t3-traj-s{seed}", [0.2, 0.2 + 0.01 * seed, 0.2], later_zero=2)
        base = {task: i % 4 for i, task in enumerate(TASKS)}  # tasks of unequal difficulty
        _eval(tmp_path, f"seg-s{seed}-step2", {t: min(4, n + 1) for t, n in base.items()}, repaired=2)
        _eval(tmp_path, f"traj-s{seed}-step2", base)
        _eval(tmp_path, f"seg-s{seed}-step1", {t: min(4, n + seed) for t, n in base.items()})  # seeds differ here
        _eval(tmp_path, f"traj-s{seed}-step1", base)
    _run(tmp_path, "t3-grpo-s0", [0.3], later_zero=1)  # one step: left out at --steps 3
    _eval(tmp_path, "start", {t: 1 for t in TASKS})
    return tmp_path


def test_training_areas_zero_return_shares_and_heldout_contrasts(root, tmp_path):
    out = tmp_path / "out"
    assert summary.main(["--runs", str(root), "--steps", "3", "--out", str(out)]) == 0
    data = json.loads((out / "summary.json").read_text())
    assert data["left_out"] == {"t3-grpo-s0": 1}
    arms = data["training"]["arms"]
    assert arms["seg"]["reward_area_mean"] == pytest.approx(0.4 + 0.01 / 3, abs=1e-9)  # seeds' areas 0.4 + 0.01·s/3
    assert arms["seg"]["later_zero_return_share"] == pytest.approx(0.5)  # one of its two later segments improved
    assert arms["traj"]["later_zero_return_share"] == pytest.approx(1.0)
    assert arms["seg"]["later_segments"] == 3 * 3 * 2
    (train_pair,) = data["training"]["comparisons"]
    assert train_pair["arms"] == ["seg", "traj"] and train_pair["difference"] == pytest.approx(0.2, abs=1e-9)
    assert train_pair["permutation_p"] == pytest.approx(0.1)  # 3 vs 3 fully separated: 2 of 20 relabellings
    step2 = data["heldout"]["steps"]["2"]
    (pair,) = step2["comparisons"]
    expected = (sum(min(4, i % 4 + 1) - i % 4 for i in range(6)) + 2) / (4 * 6)  # first turns, plus 2 repaired
    assert pair["difference"] == pytest.approx(expected)
    assert pair["ci95"][0] > 0  # every task and seed is better under seg
    assert step2["seg"]["0"]["repaired"] == 2 and step2["traj"]["0"]["repaired"] == 0
    assert data["heldout"]["start"]["episodes"] == 24
    text = (out / "summary.md").read_text()
    assert "seg − traj" in text and "6/33 (18%)" in text  # recovery pooled over seeds: 2 of 11 wrong first turns each
    assert (out / "reward_vs_step.png").stat().st_size > 0 and (out / "heldout_vs_step.png").stat().st_size > 0
    assert data["power"]["heldout_solved"]["step"] == 2 and data["power"]["heldout_solved"]["seeds_per_arm"] == 2
    assert data["heldout"]["steps"]["1"]["seg"]["2"]["solved"]["level1/t0"] == 0.5  # the latest step decides, not this
    assert data["power"]["reward_area"]["std"]["seg"] == pytest.approx(0.01 / 3)


def test_seeds_for_power_follow_the_normal_approximation():
    # 2 (1.96 + 0.84)² σ² / δ² at δ = 0.05: σ = 0.05 → 15.7, σ = 0.1 → 62.8; at least 2; none without a spread
    assert summary.seeds_for_power([0.05]) == 16
    assert summary.seeds_for_power([0.08, 0.1166]) == 63  # mean variance 0.0100
    assert summary.seeds_for_power([0.001]) == 2
    assert summary.seeds_for_power([]) is None


def test_no_run_and_bad_steps_are_clear_errors(tmp_path, capsys):
    assert summary.main(["--runs", str(tmp_path), "--steps", "3", "--out", str(tmp_path / "o")]) == 2
    assert "no run named t3-<arm>-s<seed>" in capsys.readouterr().err
    _run(tmp_path, "t3-seg-s0", [0.1], later_zero=1)
    assert summary.main(["--runs", str(tmp_path), "--steps", "0", "--out", str(tmp_path / "o")]) == 2
    assert "--steps 0" in capsys.readouterr().err
    assert summary.main(["--runs", str(tmp_path), "--steps", "5", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "no run reached 5 steps" in err and err.count("pass a smaller --steps") == 1  # the fix said once
