"""benchmarks/rl_run_summary.py: the slope interval, the t quantile, the draw-matched expected
solve rate and the paired comparison of two arms."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "rl_run_summary.py"
_spec = importlib.util.spec_from_file_location("rl_run_summary", _PATH)
summary = importlib.util.module_from_spec(_spec)
sys.modules["rl_run_summary"] = summary
_spec.loader.exec_module(summary)


@pytest.mark.parametrize(("df", "expected"), [(1, 12.706), (5, 2.571), (21, 2.080), (100, 1.984)])
def test_t_quantile_matches_the_table(df, expected):
    assert summary.t_quantile(0.975, df) == pytest.approx(expected, abs=2e-3)


def test_slope_interval_of_a_noisy_line():
    rng = random.Random(0)
    xs = [float(x) for x in range(1, 31)]
    ys = [0.5 - 0.01 * x + rng.gauss(0, 0.02) for x in xs]
    slope, low, high = summary.slope_ci(xs, ys)
    assert low < -0.01 < high and low < slope < high
    assert high < 0  # a real fall is told apart from none
    flat = [0.3 + rng.gauss(0, 0.02) for _ in xs]
    _, low, high = summary.slope_ci(xs, flat)
    assert low < 0 < high


def test_expected_solve_rate_follows_the_trainer_s_draw(tmp_path):
    from atrl.rl.config import TrainConfig
    from atrl.rl.trainer import Trainer, load_tasks

    tasks = ["builtin/relu", "builtin/silu", "builtin/gelu_tanh", "builtin/softmax"]
    config = TrainConfig(model="tiny-random:0", task_ids=tasks, tasks_per_step=2, seed=3, out_dir=str(tmp_path))
    (tmp_path / "config.yaml").write_text(json.dumps(config.model_dump(mode="json")))
    rates = {"builtin/relu": 1.0, "builtin/silu": 0.5, "builtin/gelu_tanh": 0.25, "builtin/softmax": 0.0}
    screen = tmp_path / "episodes.jsonl"
    screen.write_text("".join(
        json.dumps({"task_id": t, "turns": [{"correct": i < 4 * rate}]}) + "\n"
        for t, rate in rates.items() for i in range(4)))
    expected = summary.expected_solve_rates(tmp_path / "config.yaml", screen, [1, 2, 3])
    trainer_draws = [Trainer.sample_tasks(type("T", (), {"config": config, "tasks": load_tasks(config)})(), step)
                     for step in range(3)]
    assert expected == [sum(rates[t.id] for t in drawn) / 2 for drawn in trainer_draws]


def test_paired_comparison_sees_a_shift_and_skips_step_one():
    rng = random.Random(1)
    base = [{"step": s, "episode_solved_rate": 0.4 + rng.gauss(0, 0.05)} for s in range(1, 17)]
    lower = [{"step": r["step"], "episode_solved_rate": r["episode_solved_rate"] - 0.1 + rng.gauss(0, 0.02)
              + (5.0 if r["step"] == 1 else 0.0)} for r in base]
    text = summary.paired_comparison(lower, base)
    assert "steps 2-16 (15 pairs)" in text
    mean = float(text.split("mean ")[1].split(",")[0])
    assert mean == pytest.approx(-0.1, abs=0.03)
    assert float(text.split("p = ")[1].split()[0]) < 0.01
