"""`atrl train` and `atrl sft`: a bad agent.* value is named before the model loads."""

from __future__ import annotations

import pytest

from atrl.cli import main


@pytest.fixture
def no_model_loads(monkeypatch):
    import atrl.rl.sft
    import atrl.rl.trainer

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the agent settings were checked")

    monkeypatch.setattr(atrl.rl.trainer, "Trainer", refuse)
    monkeypatch.setattr(atrl.rl.sft, "run_sft", refuse)


@pytest.mark.parametrize("command, config", [("train", "configs/tiny-cpu.yaml"), ("sft", "configs/sft-tiny-cpu.yaml")])
def test_bad_agent_value_exits_2_naming_the_key_before_the_model_loads(command, config, no_model_loads, capsys,
                                                                       tmp_path):
    out = tmp_path / "run"
    status = main([command, "--config", config, "--set", "agent.max_turns=0", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2
    assert "agent.max_turns must be an integer ≥ 1, got 0" in err and "Traceback" not in err
    assert not out.exists()
