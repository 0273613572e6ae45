"""benchmarks/relay_rate.py keeps its episodes as tier 1's fixed rollouts, chunk by chunk."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from atrl.errors import UsageError
from atrl.rl.credit_gradients import load_groups

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "relay_rate.py"
_spec = importlib.util.spec_from_file_location("relay_rate_cli", _PATH)
cli = importlib.util.module_from_spec(_spec)
sys.modules["relay_rate_cli"] = cli
_spec.loader.exec_module(cli)

TINY = ["--set", "bf16=false", "--set", "agent.context_budget=1200", "--set", "agent.max_response_tokens=6",
        "--set", "agent.summary_tokens=6", "--set", "agent.platform=interpreter"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    from atrl.rl.tiny import build_tiny_model

    directory = tmp_path_factory.mktemp("tiny") / "model"
    build_tiny_model(directory, 0)
    return directory


def _main(monkeypatch, model: Path, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", ["relay_rate.py", "--policy", f"hf:{model}", *TINY, *args])
    cli.main()


def test_the_episodes_are_kept_as_groups_and_each_chunk_samples_with_its_own_seeds(tmp_path, monkeypatch, tiny_model):
    out = tmp_path / "rollouts"
    _main(monkeypatch, tiny_model, "--tasks", "2", "--samples", "3", "--chunk", "1", "--trajectories", str(out),
          "--json", str(tmp_path / "rates.json"))
    groups = load_groups(out)
    assert [len(g) for g in groups] == [3, 3] and len({g[0].task_id for g in groups}) == 2
    assert all(len(t.segments) == 2 for g in groups for t in g)
    seeds = {g[0].task_id: {t.config["seed"] for t in g} for g in groups}
    first, second = seeds.values()
    assert len(first) == len(second) == 1 and first != second
    assert json.loads((tmp_path / "rates.json").read_text())["episodes"] == 6


def test_existing_rollouts_are_never_overwritten(tmp_path, monkeypatch, tiny_model):
    (tmp_path / "trajectories.jsonl").write_text("kept\n")
    with pytest.raises(SystemExit):
        _main(monkeypatch, tiny_model, "--tasks", "1", "--samples", "2", "--trajectories", str(tmp_path))
    assert (tmp_path / "trajectories.jsonl").read_text() == "kept\n"


def test_more_groups_than_tasks_come_from_more_samples_split_in_sample_order(tmp_path, monkeypatch, tiny_model):
    out = tmp_path / "rollouts"
    _main(monkeypatch, tiny_model, "--tasks", "2", "--samples", "4", "--trajectories", str(out))
    groups = load_groups(out, group_size=2)
    assert [len(g) for g in groups] == [2, 2, 2, 2]
    assert [[t.sample for t in g] for g in groups] == [[0, 1], [2, 3], [0, 1], [2, 3]]
    assert all(len({t.task_id for t in g}) == 1 for g in groups) and groups[0][0].task_id != groups[2][0].task_id
    assert [len(g) for g in load_groups(out)] == [4, 4]  # without a group size: one group per task
    with pytest.raises(UsageError, match="not a multiple of group_size 3"):
        load_groups(out, group_size=3)
