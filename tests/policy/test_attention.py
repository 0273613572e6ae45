"""`atrl_sdpa`: single-token grouped-query attention on the unexpanded key/value heads."""

from __future__ import annotations

import json

import pytest
import torch

transformers = pytest.importorskip("transformers")

from atrl.policy.attention import NAME, gqa_decode_sdpa, use_gqa_decode_attention  # noqa: E402


class _Attn(torch.nn.Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.num_key_value_groups = groups
        self.is_causal = True


def _expanded_reference(query, key, value, mask, scaling):
    groups = query.shape[1] // key.shape[1]
    k = key.repeat_interleave(groups, dim=1)
    v = value.repeat_interleave(groups, dim=1)
    out = torch.nn.functional.scaled_dot_product_attention(query, k, v, attn_mask=mask, scale=scaling)
    return out.transpose(1, 2)


@pytest.mark.parametrize("heads,kv_heads", [(9, 3), (4, 2), (8, 1)])
def test_single_token_step_equals_attention_over_expanded_heads_under_a_per_row_mask(heads, kv_heads):
    torch.manual_seed(0)
    batch, length, dim = 5, 37, 16
    query = torch.randn(batch, heads, 1, dim)
    key, value = torch.randn(batch, kv_heads, length, dim), torch.randn(batch, kv_heads, length, dim)
    allowed = torch.rand(batch, length) > 0.3  # left padding and unfilled slots differ per row
    allowed[:, 0] = True
    mask = torch.where(allowed, 0.0, torch.finfo(torch.float32).min)[:, None, None, :]
    got, _ = gqa_decode_sdpa(_Attn(heads // kv_heads), query, key, value, mask, scaling=0.25)
    want = _expanded_reference(query, key, value, mask, 0.25)
    assert got.shape == (batch, 1, heads, dim)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_a_head_swap_would_be_caught():
    # the test above can fail: pairing query heads with the wrong key/value head changes the output
    torch.manual_seed(1)
    query, key, value = torch.randn(2, 4, 1, 8), torch.randn(2, 2, 11, 8), torch.randn(2, 2, 11, 8)
    got, _ = gqa_decode_sdpa(_Attn(2), query, key, value, None)
    swapped = _expanded_reference(query, key.flip(1), value.flip(1), None, None)
    assert not torch.allclose(got, swapped, atol=1e-3)


def test_multi_token_calls_go_to_transformers_sdpa():
    torch.manual_seed(2)
    query, key, value = torch.randn(2, 4, 6, 8), torch.randn(2, 2, 6, 8), torch.randn(2, 2, 6, 8)
    got, _ = gqa_decode_sdpa(_Attn(2), query, key, value, None, is_causal=True)
    k, v = key.repeat_interleave(2, dim=1), value.repeat_interleave(2, dim=1)
    want = torch.nn.functional.scaled_dot_product_attention(query, k, v, is_causal=True).transpose(1, 2)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_a_switched_model_gives_the_same_logits_and_saves_as_sdpa(tmp_path):
    cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=96, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=256)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).eval()
    assert model.config._attn_implementation == "sdpa"
    ids = torch.randint(0, 128, (3, 12))
    with torch.no_grad():
        want = model(ids).logits[:, -1]
        assert use_gqa_decode_attention(model) and model.config._attn_implementation == NAME
        prefix = model(ids[:, :-1], use_cache=True)
        step = model(ids[:, -1:], past_key_values=prefix.past_key_values, use_cache=True).logits[:, -1]
    torch.testing.assert_close(step, want, atol=1e-4, rtol=1e-4)
    model.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert NAME not in json.dumps(saved)  # a checkpoint loads anywhere, without this module
    assert not use_gqa_decode_attention(model)  # already switched: nothing to do
