"""The policy interface: batched chat generation with token ids and log-probs.

Every policy (`hf`, `openai`, `replay`, `reference`) implements `Policy`. The agent speaks to
policies only through this interface and never tests for a model family or a device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass
class SamplingParams:
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 512
    seed: int | None = None


@dataclass
class GenerationRequest:
    """One prompt of a batch. `messages` is the chat so far; `prompt_ids`, when given, is the
    exact token sequence to continue (the agent's append-only context), which token-level
    policies use instead of re-rendering `messages`. `task_id`/`turn` let scripted policies
    find their response."""

    messages: list[Message]
    prompt_ids: list[int] | None = None
    task_id: str = ""
    turn: int = 0
    sample: int = 0
    kind: str = "turn"  # "turn" | "summary"


@dataclass
class Generation:
    text: str
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] | None = None  # one per token id, under the sampling distribution's model
    finish_reason: str = "stop"  # "stop" | "length"


@runtime_checkable
class Policy(Protocol):
    """Text generation behind one interface.

    `render` and `tokenize` expose the policy's own chat template and tokenizer so that the
    agent counts its context budget in the policy's tokens and builds append-only token
    sequences: `render(messages, add_generation_prompt)` is the templated text, `tokenize(text)`
    its ids without adding special tokens.
    """

    name: str

    def generate(self, requests: list[GenerationRequest], params: SamplingParams) -> list[Generation]: ...

    def render(self, messages: list[Message], add_generation_prompt: bool) -> str: ...

    def tokenize(self, text: str) -> list[int]: ...

    def detokenize(self, ids: list[int]) -> str: ...
