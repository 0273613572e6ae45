"""`AgentConfig`: every knob of an episode, with defaults. Lengths are in the policy's tokens."""

from __future__ import annotations

from dataclasses import dataclass

from atrl.policy.base import SamplingParams


@dataclass
class AgentConfig:
    max_turns: int = 8  # attempts (responses judged by the harness) per episode
    turns_per_segment: int = 4  # compact after this many turns in one segment
    max_segments: int = 4  # the episode ends instead of compacting past this many segments
    context_budget: int = 8192  # no context (prompt + sampled tokens) ever exceeds this many tokens
    max_response_tokens: int = 2048  # cap on the tokens sampled for one response
    summary_tokens: int = 256  # cap on the tokens sampled for one compaction summary
    target_score: float | None = None  # stop once the best score reaches this (None: never early)
    kb: bool = True  # inject knowledge-base text when a Knowledge source is given
    temperature: float = 1.0  # sampling temperature (0: greedy)
    top_p: float = 1.0  # nucleus sampling mass
    seed: int | None = None  # base seed; generate call k uses seed + k (None: unseeded)
    platform: str = "cuda"  # "cuda" | "interpreter" | "npu": named in the system prompt
    preset: str | None = None  # task size preset shown to the policy (None: small on the interpreter, else full)

    def __post_init__(self) -> None:
        for name in ("max_turns", "turns_per_segment", "max_segments", "context_budget",
                     "max_response_tokens", "summary_tokens"):
            if getattr(self, name) < 1:
                from atrl.errors import UsageError

                raise UsageError(f"agent.{name} must be an integer ≥ 1, got {getattr(self, name)}",
                                 f"set agent.{name} to 1 or more (in the config file or with --set)")

    def task_preset(self) -> str:
        """The preset whose sizes the task message shows (the one the harness runs)."""
        if self.preset is not None:
            return self.preset
        return "small" if self.platform == "interpreter" else "full"

    def sampling(self, max_tokens: int, call: int) -> SamplingParams:
        """Sampling parameters for the `call`-th generate call of a run."""
        seed = None if self.seed is None else self.seed + call
        return SamplingParams(temperature=self.temperature, top_p=self.top_p, max_tokens=max_tokens, seed=seed)
