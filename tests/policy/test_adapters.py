"""Which adapter directories carry their own tokenizer."""

from __future__ import annotations

from atrl.policy.adapters import has_tokenizer


def test_an_adapter_with_only_a_tokenizer_config_uses_the_base_models_tokenizer(tmp_path):
    # adapters copied with their small files only keep tokenizer_config.json, which builds no tokenizer
    (tmp_path / "tokenizer_config.json").write_text("{}")
    assert not has_tokenizer(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{}")
    assert has_tokenizer(tmp_path)


def test_the_default_policy_needs_nothing_beyond_the_base_install():
    # `pip install -e .` (the README's main job) must be able to load the default policy's adapter
    from pathlib import Path

    import pytest

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    required = {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in project["dependencies"]}
    assert {"peft", "transformers", "gguf", "accelerate"} <= required


def test_the_shipped_adapter_carries_its_tokenizer_and_the_base_config_of_this_transformers_major():
    # without them the default policy parses the 93 MB GGUF file's metadata twice more on every load
    from atrl.policy.adapters import base_config_file
    from atrl.policy.hf import shipped_adapter_dir

    adapter = shipped_adapter_dir()
    assert has_tokenizer(adapter)
    assert base_config_file(adapter) == adapter / "base_config.json"


def test_a_base_config_written_by_another_transformers_major_is_not_used(tmp_path):
    import json

    import transformers

    from atrl.policy.adapters import BASE_CONFIG_FILE, base_config_file

    assert base_config_file(tmp_path) is None
    major = int(transformers.__version__.split(".")[0])
    for version, used in ((f"{major}.0.1", True), (f"{major - 1}.57.0", False)):
        (tmp_path / BASE_CONFIG_FILE).write_text(json.dumps({"model_type": "llama", "transformers_version": version}))
        assert (base_config_file(tmp_path) is not None) == used, version


def test_an_adapter_loads_its_base_with_the_config_saved_beside_it(tmp_path):
    import json

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from atrl.policy.adapters import BASE_CONFIG_FILE, write_base_config, write_base_spec
    from atrl.policy.hf import HFPolicy
    from atrl.rl.tiny import build_tiny_model

    base_dir = tmp_path / "base"
    build_tiny_model(base_dir, 0)
    model = AutoModelForCausalLM.from_pretrained(str(base_dir))
    adapter = tmp_path / "adapter"
    get_peft_model(model, LoraConfig(r=2, target_modules="all-linear", task_type="CAUSAL_LM")).save_pretrained(str(adapter))
    write_base_spec(adapter, f"hf:{base_dir}")
    write_base_config(adapter, model.config)
    saved = json.loads((adapter / BASE_CONFIG_FILE).read_text())
    saved["rms_norm_eps"] = 0.125  # a mark only the saved file has
    (adapter / BASE_CONFIG_FILE).write_text(json.dumps(saved))
    policy = HFPolicy(adapter, device="cpu", dtype=torch.float32, engine=None)
    assert policy.model.config.rms_norm_eps == 0.125


def test_a_gguf_file_is_parsed_once_and_its_name_maps_built_once_while_loading_and_the_originals_come_back(tmp_path):
    import gguf

    from atrl.policy.hf import gguf_parsed_once

    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(2)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    original_map, original_reader = gguf.get_tensor_name_map, gguf.GGUFReader
    arch = next(iter(gguf.MODEL_ARCH_NAMES))
    with gguf_parsed_once():
        assert gguf.get_tensor_name_map(arch, 2) is gguf.get_tensor_name_map(arch, 2)
        assert gguf.GGUFReader(path) is gguf.GGUFReader(str(path)) is gguf.GGUFReader(tmp_path / "." / "tiny.gguf")
    assert gguf.get_tensor_name_map is original_map and gguf.GGUFReader is original_reader
    assert gguf.get_tensor_name_map(arch, 2) is not gguf.get_tensor_name_map(arch, 2)
    assert gguf.GGUFReader(path) is not gguf.GGUFReader(path)


def test_loading_a_model_hides_transformers_progress_bars_and_restores_them():
    import transformers.modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as transformers_logging

    from atrl.policy.hf import loading_bars_hidden

    bar = gguf_utils.tqdm
    assert transformers_logging.is_progress_bar_enabled()
    with loading_bars_hidden():
        assert not transformers_logging.is_progress_bar_enabled()
        assert gguf_utils.tqdm([1], desc="x").disable
    assert transformers_logging.is_progress_bar_enabled() and gguf_utils.tqdm is bar
