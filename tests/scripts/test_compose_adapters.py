"""scripts/compose_adapters.py: an adapter trained over another one merged becomes one adapter
that loads alone as the two in turn, keeping the first's alpha/r."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import torch

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "compose_adapters.py"
_spec = importlib.util.spec_from_file_location("compose_adapters_cli", _PATH)
cli = importlib.util.module_from_spec(_spec)
sys.modules["compose_adapters_cli"] = cli
_spec.loader.exec_module(cli)


def _random_adapter(model: torch.nn.Module, directory: Path, base: Path, seed: int, r: int) -> Path:
    from peft import LoraConfig, get_peft_model

    from atrl.policy.adapters import write_base_spec

    torch.manual_seed(seed)
    wrapped = get_peft_model(model, LoraConfig(r=r, lora_alpha=2 * r, target_modules="all-linear",
                                               init_lora_weights=False))
    wrapped.save_pretrained(directory)
    write_base_spec(directory, f"hf:{base}")
    return directory


def test_two_stacked_adapters_load_as_one_adapter_equal_to_both_in_turn(tmp_path):
    from atrl.policy.hf import HFPolicy
    from atrl.rl.tiny import build_tiny_model

    base = build_tiny_model(tmp_path / "tiny", 0)
    first = _random_adapter(HFPolicy(base, device="cpu", dtype=torch.float32, engine=None).model,
                            tmp_path / "first", base, seed=1, r=4)
    over_first = HFPolicy(first, device="cpu", dtype=torch.float32, engine=None).model  # first merged
    second = _random_adapter(over_first, tmp_path / "second", base, seed=2, r=2)

    assert cli.main([str(first), str(second), str(tmp_path / "both")]) == 0
    config = json.loads((tmp_path / "both" / "adapter_config.json").read_text())
    assert config["r"] == 6 and config["lora_alpha"] == 12  # the first's alpha/r = 2 kept
    from atrl.policy.adapters import read_base_spec

    assert read_base_spec(tmp_path / "both") == f"hf:{base}"  # the first's base spec, not peft's recorded path
    expected = cli.merged_weights(first, second)
    alone = HFPolicy(tmp_path / "both", device="cpu", dtype=torch.float32, engine=None).model.state_dict()
    without_second = cli.merged_weights(first)
    assert any(not torch.allclose(expected[k], without_second[k]) for k in expected)  # the second stage shows
    for name, weight in expected.items():
        assert torch.allclose(alone[name], weight, atol=1e-5), name


def test_a_folder_that_is_not_an_adapter_is_refused_before_anything_loads(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert cli.main([str(tmp_path / "empty"), str(tmp_path / "empty"), str(tmp_path / "out")]) == 2
    assert "not a LoRA adapter directory" in capsys.readouterr().err and not (tmp_path / "out").exists()
