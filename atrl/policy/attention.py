"""`atrl_sdpa`: transformers' SDPA attention, with single-token grouped-query steps run on the
key/value heads directly.

Why: with an attention mask, transformers' "sdpa" attention expands (`repeat_kv`) every cached key
and value to all query heads before calling SDPA — in the versions the GPU machines run, and in
newer ones whenever the model is `torch.compile`d. In a decode step that copy is pure memory
traffic (SmolLM2: 9 query heads on 3 key/value heads, so the whole cache is written and read
three times over). With one query token per row, the query heads of a group can take
the place of query positions of their key/value head: `[B, H, 1, D] -> [B, KVH, H/KVH, D]`,
attending to the unexpanded `[B, KVH, L, D]` cache under the same per-row mask. Any other call
(prefill, training forward passes, masks that differ per head) goes to transformers' own
function unchanged.

`use_gqa_decode_attention(model)` registers the implementation and switches a model that uses
"sdpa" to it; the model's config keeps saying "sdpa" where it is saved.
"""

from __future__ import annotations

from typing import Any

import torch

NAME = "atrl_sdpa"


def gqa_decode_sdpa(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    is_causal: bool | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """An `AttentionInterface` function: query `[B, H, Q, D]`, key/value `[B, KVH, L, D]`, output
    `[B, Q, H, D]` (as transformers' "sdpa")."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    batch, heads, q_len, _ = query.shape
    kv_heads = key.shape[1]
    shared_mask = attention_mask is None or (attention_mask.dim() == 4 and attention_mask.shape[1] == 1)
    if (q_len != 1 or kv_heads == heads or heads % kv_heads or not shared_mask
            or kwargs.get("position_bias") is not None or kwargs.get("softcap") is not None):
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout,
                                      scaling=scaling, is_causal=is_causal, **kwargs)
    # head h belongs to key/value head h // (H/KVH), the order `repeat_kv` expands in
    packed = query.reshape(batch, kv_heads, heads // kv_heads, query.shape[-1])
    out = torch.nn.functional.scaled_dot_product_attention(
        packed, key, value, attn_mask=attention_mask, dropout_p=dropout, scale=scaling
    )
    return out.reshape(batch, heads, 1, value.shape[-1]).transpose(1, 2).contiguous(), None


def register() -> None:
    """Make "atrl_sdpa" known to transformers (attention and mask interfaces); idempotent."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(NAME, gqa_decode_sdpa)
    AttentionMaskInterface.register(NAME, sdpa_mask)


def use_gqa_decode_attention(model: Any) -> bool:
    """Switch `model` from "sdpa" to "atrl_sdpa" (same results, no key/value expansion in
    single-token steps). Returns whether it switched; other implementations are left alone."""
    if getattr(model.config, "_attn_implementation", None) != "sdpa":
        return False
    register()
    model.set_attn_implementation(NAME)
    return model.config._attn_implementation == NAME
