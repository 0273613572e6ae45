"""Which adapter directories carry their own tokenizer."""

from __future__ import annotations

from atrl.policy.adapters import has_tokenizer


def test_an_adapter_with_only_a_tokenizer_config_uses_the_base_models_tokenizer(tmp_path):
    # adapters copied with their small files only keep tokenizer_config.json, which builds no tokenizer
    (tmp_path / "tokenizer_config.json").write_text("{}")
    assert not has_tokenizer(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{}")
    assert has_tokenizer(tmp_path)
