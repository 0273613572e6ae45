"""`parse_policy_spec`: a spec's parts, read without loading anything."""

from __future__ import annotations

import pytest

from atrl.errors import UsageError
from atrl.policy import PolicySpec, parse_policy_spec


@pytest.mark.parametrize("spec, parsed", [
    ("smollm2-135m", PolicySpec("smollm2-135m")),
    ("smollm2-135m-triton", PolicySpec("smollm2-135m-triton")),
    ("reference", PolicySpec("reference")),
    ("hf:models/tiny", PolicySpec("hf", "models/tiny")),
    ("replay:run.jsonl", PolicySpec("replay", "run.jsonl")),
    ("openai:qwen@http://127.0.0.1:8000/v1", PolicySpec("openai", "qwen", "http://127.0.0.1:8000/v1")),
])
def test_each_form_is_split_into_its_parts(spec, parsed):
    assert parse_policy_spec(spec) == parsed


@pytest.mark.parametrize("spec", ["bogus:thing", "hf:", "openai:qwen", "openai:qwen@localhost:8000", "smollm"])
def test_a_malformed_spec_names_the_forms(spec):
    with pytest.raises(UsageError, match="unknown policy spec.*replay:FILE"):
        parse_policy_spec(spec)


def test_only_local_transformers_models_are_hf():
    assert parse_policy_spec("smollm2-135m").is_hf and parse_policy_spec("hf:x").is_hf
    assert parse_policy_spec("smollm2-135m-triton").is_hf
    assert not parse_policy_spec("reference").is_hf and not parse_policy_spec("replay:x").is_hf
