"""Rollout generation engines for transformers causal LMs, behind one interface.

`make_engine(name, model, tokenizer)` picks one:

- `"plain"` — `PlainGenerateEngine`: transformers' `model.generate`; the reference and baseline.
- `"static"` — `StaticCacheEngine` (in `engine_static`): a static KV cache and a hand-written
  decode loop whose per-token step is captured once in a CUDA graph and replayed; eager (and
  still exact) on CPU.
- `"compiled"` — the same engine with the decode step's forward `torch.compile`d first (fewer,
  fused kernels per step; each new batch/cache shape compiles once).
- `"vllm"` — `VLLMEngine` (in `engine_vllm`): vLLM, for those who install the `vllm` extra.

All return `EngineOutput`s (see `engine_base`), so `HFPolicy` can delegate to any of them.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import torch

from atrl.errors import UsageError
from atrl.policy.engine_base import (
    LENGTH,
    STOP,
    EngineOutput,
    GenerationEngine,
    check_request,
    finish_row,
)
from atrl.policy.engine_static import StaticCacheEngine

__all__ = [
    "ENGINE_NAMES",
    "LENGTH",
    "STOP",
    "EngineOutput",
    "GenerationEngine",
    "PlainGenerateEngine",
    "StaticCacheEngine",
    "left_pad",
    "make_engine",
]

ENGINE_NAMES = ("plain", "static", "compiled", "vllm")


def left_pad(prompts: list[list[int]], pad_token_id: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """`(input_ids, attention_mask)`, both `[batch, longest prompt]` long tensors on `device`,
    prompts aligned to the right (padding on the left, mask 0 there)."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        mask[row, width - len(prompt) :] = 1
    return ids.to(device), mask.to(device)


def seeded_rng(seed: int | None, device: torch.device):
    """A context in which torch's global generators (CPU and `device`) start from `seed`; the
    previous global state comes back afterwards. No-op context for `seed=None`."""
    if seed is None:
        return nullcontext()
    devices = [device] if device.type == "cuda" else []
    ctx = torch.random.fork_rng(devices=devices)

    class _Seeded:
        def __enter__(self) -> None:
            ctx.__enter__()
            torch.manual_seed(seed)

        def __exit__(self, *exc: object) -> None:
            ctx.__exit__(*exc)

    return _Seeded()


class PlainGenerateEngine:
    """`model.generate` on the left-padded batch with `return_dict_in_generate` and
    `output_logits`; log-probs come from the raw logits of each step. Sampling uses only
    temperature and top-p (top-k off, no repetition penalty), whatever the model's generation
    config says; an empty `eos_token_ids` generates exactly `max_new_tokens` per row."""

    name = "plain"

    def __init__(self, model: Any, tokenizer: Any = None) -> None:
        self.model = model
        self.tokenizer = tokenizer

    @torch.inference_mode()
    def generate(
        self,
        prompts: list[list[int]],
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        seed: int | None,
        eos_token_ids: list[int],
        pad_token_id: int,
    ) -> list[EngineOutput]:
        check_request(prompts, max_new_tokens, temperature, top_p)
        device = next(self.model.parameters()).device
        ids, mask = left_pad(prompts, pad_token_id, device)
        sample = temperature > 0
        kwargs: dict[str, Any] = {"do_sample": sample, "repetition_penalty": 1.0}
        if sample:
            kwargs.update(temperature=temperature, top_p=top_p, top_k=0)
        with seeded_rng(seed, device):
            out = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=max_new_tokens,
                pad_token_id=pad_token_id,
                eos_token_id=list(eos_token_ids),  # [] overrides the model's own EOS ids
                return_dict_in_generate=True,
                output_logits=True,
                **kwargs,
            )
        new_tokens = out.sequences[:, ids.shape[1] :]
        chosen = torch.empty(new_tokens.shape, dtype=torch.float32, device=new_tokens.device)
        for step, logits in enumerate(out.logits):  # one [batch, vocab] at a time: no batch×steps×vocab copy
            logits = logits.float()
            logp = torch.log_softmax(logits / temperature if sample else logits, dim=-1)
            chosen[:, step] = logp.gather(-1, new_tokens[:, step, None]).squeeze(-1)
        rows_t, rows_lp = new_tokens.tolist(), chosen.tolist()
        return [finish_row(t, lp, eos_token_ids) for t, lp in zip(rows_t, rows_lp, strict=True)]


def make_engine(name: str, model: Any, tokenizer: Any = None, **options: Any) -> GenerationEngine:
    """The engine called `name` ("plain" | "static" | "compiled" | "vllm") for `model` (a transformers causal LM;
    for "vllm", a model directory or hub id, or a model whose `name_or_path` is one). `options`
    go to the engine's constructor. Raises `UsageError` for an unknown name."""
    if name == "plain":
        return PlainGenerateEngine(model, tokenizer, **options)
    if name == "static":
        return StaticCacheEngine(model, tokenizer, **options)
    if name == "compiled":
        return StaticCacheEngine(model, tokenizer, **{"compile": True, **options})
    if name == "vllm":
        from atrl.policy.engine_vllm import VLLMEngine

        return VLLMEngine(model, tokenizer, **options)
    raise UsageError(f"unknown generation engine {name!r}", f"use one of {', '.join(ENGINE_NAMES)}")
