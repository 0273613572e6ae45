"""benchmarks/credit_relay_summary.py on fake key-relay runs whose answer is known."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "credit_relay_summary.py"
_spec = importlib.util.spec_from_file_location("credit_relay_summary", _PATH)
summary = importlib.util.module_from_spec(_spec)
sys.modules["credit_relay_summary"] = summary
_spec.loader.exec_module(summary)


def _run(root: Path, name: str, relay: list[float]) -> None:
    (root / name).mkdir(parents=True)
    lines = [json.dumps({"step": i + 1, "key_relay_rate": r, "reward_mean": 2 * r}) + "\n" for i, r in enumerate(relay)]
    (root / name / "metrics.jsonl").write_text("".join(reversed(lines)))  # order comes from "step"


@pytest.fixture
def root(tmp_path):
    for seed in range(4):
        _run(tmp_path, f"seg-x1.0-s{seed}", [0.1 * seed, 0.5 + 0.1 * seed, 0.9])  # areas 0.467 .. 0.667
        _run(tmp_path, f"traj-x1.0-s{seed}", [0.0, 0.1 * seed, 0.2, 0.3])  # one step more: cut to 3
        _run(tmp_path, f"seg-x0-s{seed}", [0.2, 0.2, 0.2])
        _run(tmp_path, f"traj-x0-s{seed}", [0.2, 0.2, 0.2, 0.2])
    (tmp_path / "not-a-run").mkdir()
    return tmp_path


def test_areas_tests_and_files(root, tmp_path):
    out = tmp_path / "out"
    assert summary.main(["--runs", str(root), "--out", str(out)]) == 0
    data = json.loads((out / "summary.json").read_text())
    assert data["steps"] == 3
    relay = data["results"]["key_relay_rate"]
    assert relay["1.0"]["arms"]["seg"]["areas"]["2"] == pytest.approx((0.2 + 0.7 + 0.9) / 3)
    # steps in step order, cut to the steps every run reached: [0.0, 0.3, 0.2] of [0.0, 0.3, 0.2, 0.3]
    assert relay["1.0"]["arms"]["traj"]["areas"]["3"] == pytest.approx(0.5 / 3)
    [pair] = relay["1.0"]["comparisons"]
    assert pair["arms"] == ["seg", "traj"] and pair["difference"] > 0.4
    assert pair["permutation_p"] == pytest.approx(2 / 70)  # 4 vs 4 fully separated
    assert pair["sign_flip_p"] == pytest.approx(2 / 16)
    assert relay["0"]["comparisons"][0]["difference"] == pytest.approx(0.0)
    assert relay["0"]["comparisons"][0]["permutation_p"] == 1.0
    assert (out / "relay_vs_step.png").stat().st_size > 0
    assert "seg − traj" in (out / "summary.md").read_text()


def test_steps_beyond_a_run_and_empty_root_are_clear_errors(root, tmp_path, capsys):
    assert summary.main(["--runs", str(root), "--out", str(tmp_path / "o"), "--steps", "4"]) == 2
    assert "use --steps 3" in capsys.readouterr().err
    assert summary.main(["--runs", str(tmp_path / "nothing"), "--out", str(tmp_path / "o")]) == 2
    assert "scripts/experiment_credit.sh relay" in capsys.readouterr().err


def test_complete_only_leaves_the_short_runs_out_and_names_them(root, tmp_path):
    out = tmp_path / "out"
    assert summary.main(["--runs", str(root), "--out", str(out), "--steps", "4", "--complete-only"]) == 0
    data = json.loads((out / "summary.json").read_text())
    assert data["steps"] == 4
    assert sorted(data["left_out"]) == [f"seg-x{x}-s{s}" for x in ("0", "1.0") for s in range(4)]
    relay = data["results"]["key_relay_rate"]
    assert sorted(relay["1.0"]["arms"]) == ["traj"]  # every seg run had 3 steps
    assert relay["1.0"]["arms"]["traj"]["areas"]["3"] == pytest.approx(0.8 / 4)
    assert "seg-x1.0-s0 (3 steps)" in (out / "summary.md").read_text()
    assert summary.main(["--runs", str(root), "--out", str(out), "--steps", "5", "--complete-only"]) == 2
    with pytest.raises(SystemExit):  # without --steps there is nothing to be complete against
        summary.main(["--runs", str(root), "--out", str(out), "--complete-only"])
