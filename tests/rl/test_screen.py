"""`atrl tasks screen`: solve rates per task of an eval run, and the tasks kept for training."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from atrl.cli import app
from atrl.errors import UsageError
from atrl.eval.report import EPISODES_FILE
from atrl.rl.screen import keep, solve_rates


def _episode(task: str, sample: int, correct: list[bool]) -> dict:
    turns = [dict(turn=i, score=float(c), compiled=True, correct=c, stage="profile" if c else "correctness")
             for i, c in enumerate(correct)]
    return dict(task_id=task, level=1, sample=sample, turns=turns)


@pytest.fixture
def run_dir(tmp_path):
    records = (
        [_episode("builtin/relu", s, [False, s < 3]) for s in range(4)]  # 3 of 4 solved (at turn 2)
        + [_episode("builtin/add", s, [s == 0, False]) for s in range(4)]  # 1 of 4
        + [_episode("builtin/silu", s, [False, False]) for s in range(4)]  # never
        + [_episode("builtin/gelu_tanh", s, [True]) for s in range(2)]  # always, but only 2 episodes
    )
    (tmp_path / EPISODES_FILE).write_text("".join(json.dumps(r) + "\n" for r in records))
    return tmp_path


def test_solve_rates_count_episodes_with_any_correct_turn(run_dir):
    rates = {r.task_id: (r.solved, r.episodes) for r in solve_rates(run_dir)}
    assert rates == {"builtin/relu": (3, 4), "builtin/add": (1, 4), "builtin/silu": (0, 4), "builtin/gelu_tanh": (2, 2)}


def test_keep_is_inclusive_and_needs_enough_episodes(run_dir):
    rates = solve_rates(run_dir)
    assert [r.task_id for r in keep(rates, 0.25, 0.75)] == ["builtin/add", "builtin/relu"]
    assert [r.task_id for r in keep(rates, 0.3, 1.0, min_episodes=3)] == ["builtin/relu"]
    with pytest.raises(UsageError, match="not 0 <= low <= high <= 1"):
        keep(rates, 0.8, 0.2)


def test_cli_prints_a_task_ids_override(run_dir):
    result = CliRunner().invoke(app, ["tasks", "screen", str(run_dir), "--low", "0.1", "--high", "0.8"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == "task_ids=[builtin/add,builtin/relu]"


def test_empty_run_is_a_usage_error(tmp_path):
    (tmp_path / EPISODES_FILE).write_text("")
    with pytest.raises(UsageError, match="no judged episodes"):
        solve_rates(tmp_path)
