"""What every rollout generation engine shares: the `GenerationEngine` protocol, its `EngineOutput`,
input checks and the cut of a generated row at its first end-of-sequence token.

An engine continues a batch of token-id prompts and returns, per prompt, the sampled token ids,
the log-probability of each under `softmax(logits / temperature)` (natural log; temperature 0 is
greedy decoding and the log-prob is under `softmax(logits)`), and why it stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from atrl.errors import UsageError

STOP = "stop"
LENGTH = "length"


@dataclass
class EngineOutput:
    """One continuation. `token_ids` ends with the end-of-sequence id when `finish_reason` is
    `"stop"`; it holds `max_new_tokens` ids (none of them an end-of-sequence id) when it is
    `"length"`. `logprobs[i]` is the natural-log probability of `token_ids[i]`."""

    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str  # "stop" | "length"


@runtime_checkable
class GenerationEngine(Protocol):
    """Batched continuation of token-id prompts (see the module docstring for the log-probs).

    `top_p` < 1 keeps the smallest set of most likely tokens whose probability reaches `top_p`
    before sampling (the reported log-prob stays the one under the full tempered softmax).
    `seed` makes sampling reproducible for the same engine, inputs and device; `None` draws one
    from torch's global generator. An empty `eos_token_ids` never stops early. `pad_token_id`
    fills the left padding of shorter prompts.
    """

    name: str

    def generate(
        self,
        prompts: list[list[int]],
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        seed: int | None,
        eos_token_ids: list[int],
        pad_token_id: int,
    ) -> list[EngineOutput]: ...


def check_request(prompts: Sequence[Sequence[int]], max_new_tokens: int, temperature: float, top_p: float) -> None:
    """Raise `UsageError` for an empty batch or prompt, or sampling settings out of range."""
    if not prompts:
        raise UsageError("no prompts to generate from", "pass at least one prompt")
    if any(len(p) == 0 for p in prompts):
        raise UsageError("a prompt has no tokens", "every prompt needs at least one token id")
    if max_new_tokens < 1:
        raise UsageError(f"max_new_tokens is {max_new_tokens}", "ask for at least one new token")
    if temperature < 0:
        raise UsageError(f"temperature is {temperature}", "use 0 (greedy) or a positive temperature")
    if not 0 < top_p <= 1:
        raise UsageError(f"top_p is {top_p}", "use a value in (0, 1]")


def finish_row(token_ids: Sequence[int], logprobs: Sequence[float], eos_token_ids: Sequence[int]) -> EngineOutput:
    """The output for one generated row: cut after its first end-of-sequence id (kept, reason
    "stop"), else the whole row (reason "length")."""
    eos = set(eos_token_ids)
    for i, tok in enumerate(token_ids):
        if tok in eos:
            return EngineOutput([int(t) for t in token_ids[: i + 1]], [float(x) for x in logprobs[: i + 1]], STOP)
    return EngineOutput([int(t) for t in token_ids], [float(x) for x in logprobs], LENGTH)
