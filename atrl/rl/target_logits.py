"""Logits at the target tokens only: the output head applied where a loss is taken.

A causal LM's forward projects every position onto the vocabulary, [B, T, V], although the
training losses (PPO, SFT) read the logits of the trainable tokens only. In RL rows most tokens
are prompt, feedback and summary context (the key-relay rows: 2,069 of 57,603 tokens a step), so
the full projection and its float32 log-softmax are most of the update's memory and much of its
time. Here a forward pre-hook on the model's output embedding gathers the hidden states of the
target positions before the projection, so the head computes [N, V] for the N targets instead
(transformers' `logits_to_keep` keeps the same positions for every row, which saves far less
when rows' responses sit at different offsets). Models whose logits do not come from that module
get the full projection, indexed afterwards: the same numbers, without the saving.
"""

from __future__ import annotations

import torch


def output_head(model: torch.nn.Module) -> torch.nn.Module | None:
    """The module that projects hidden states onto the vocabulary (inside DDP/FSDP wrappers)."""
    inner = getattr(model, "module", model)
    get = getattr(inner, "get_output_embeddings", None)
    head = get() if callable(get) else None
    return head if isinstance(head, torch.nn.Module) else None


def target_logits(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    target_mask: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(logits [N, V], target ids [N]) for the N positions p ≥ 1 with `target_mask[b, p]` set;
    token p is scored by the hidden state at p − 1. Rows in order, positions ascending."""
    targets = target_mask[:, 1:].bool()
    before = torch.zeros_like(target_mask, dtype=torch.bool)
    before[:, :-1] = targets  # hidden positions whose next token is a target
    head = output_head(model)
    handle = None
    if head is not None:
        def gather(_module: torch.nn.Module, args: tuple) -> tuple:
            hidden = args[0]
            return (hidden[before] if hidden.shape[:2] == before.shape else hidden, *args[1:])

        handle = head.register_forward_pre_hook(gather)
    try:
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    finally:
        if handle is not None:
            handle.remove()
    if logits.dim() == 3:  # the head was bypassed: index the full projection
        logits = logits[before]
    return logits, input_ids[:, 1:][targets]
