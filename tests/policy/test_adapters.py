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
