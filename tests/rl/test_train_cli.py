"""`atrl train`: config errors name the key and exit 2; the shipped configs validate."""

from __future__ import annotations

from pathlib import Path

import pytest

from atrl.cli import main
from atrl.errors import UsageError
from atrl.rl.config import load_config, parse_overrides

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.mark.parametrize("name", ["tiny-cpu", "smollm2-gpu", "7b-multi-gpu"])
def test_shipped_configs_validate(name):
    cfg = load_config(CONFIGS / f"{name}.yaml")
    assert cfg.agent_config().max_turns >= 1


def test_overrides_are_dotted_and_yaml_typed():
    assert parse_overrides(["lr=1e-5", "agent.max_turns=4", "lora=true"]) == {
        "lr": 1e-5,
        "agent": {"max_turns": 4},
        "lora": True,
    }
    cfg = load_config(CONFIGS / "tiny-cpu.yaml", ["agent.max_turns=5", "gamma=0.5"], out_dir="x")
    assert (cfg.agent["max_turns"], cfg.gamma, cfg.out_dir) == (5, 0.5, "x")


@pytest.mark.parametrize(
    "override, key",
    [("nope=1", "nope"), ("gamma=2", "gamma"), ("agent.turns=3", "agent"), ("estimator=ppo", "estimator")],
)
def test_bad_keys_and_values_raise_usage_error_naming_the_key(override, key):
    with pytest.raises(UsageError, match=f"'{key}'"):
        load_config(CONFIGS / "tiny-cpu.yaml", [override])


def test_cli_exits_2_on_a_bad_key(tmp_path, capsys):
    status = main(
        ["train", "--config", str(CONFIGS / "tiny-cpu.yaml"), "--set", "bogus=1", "--out", str(tmp_path)]
    )
    assert status == 2
    assert "bogus" in capsys.readouterr().err
