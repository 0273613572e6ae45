"""`VLLMEngine`: rollouts through vLLM, for users who install the `vllm` extra.

UNTESTED HERE: the project's CPU test machine and its GPU machine have no vLLM, so this adapter is
written against vLLM's documented offline API (`LLM`, `SamplingParams`, token-id prompts) and
has never been run by the project's tests. vLLM is imported only when the engine is built; without
it the constructor raises `UsageError` naming the extra.

Mapping to the `GenerationEngine` contract:
- prompts go in as `{"prompt_token_ids": ids}`; `max_new_tokens` → `max_tokens`;
- `eos_token_ids` → `stop_token_ids` with `ignore_eos=True` (only the given ids stop a row); the
  stop token is kept as the last token id;
- `seed` → per-request seeds `seed + i` (identical prompts in one batch still differ);
- log-probs: `logprobs=0` returns the sampled token's log-prob; the engine asks vLLM for
  `logprobs_mode="processed_logprobs"` (after temperature) so they match `softmax(logits / T)`;
  with top_p < 1 vLLM renormalises over the kept tokens, unlike the other engines.
The model and vLLM hold separate weights: after a training update the vLLM copy is stale until
the caller reloads it (this adapter does not sync weights).
"""

from __future__ import annotations

from typing import Any

from atrl.errors import UsageError
from atrl.policy.engine_base import LENGTH, STOP, EngineOutput, check_request


def _model_path(model: Any) -> str:
    if isinstance(model, str):
        return model
    path = getattr(getattr(model, "config", None), "name_or_path", None) or getattr(model, "name_or_path", None)
    if not path:
        raise UsageError("the vllm engine needs a model directory or hub id", "pass its path as the model")
    return str(path)


class VLLMEngine:
    """vLLM's offline `LLM` behind `GenerationEngine` (see the module docstring; untested here).

    `model`: a model directory / hub id, or a transformers model whose `name_or_path` is one.
    `llm_options` go to `vllm.LLM` (e.g. `gpu_memory_utilization=0.5`, `dtype="bfloat16"`).
    """

    name = "vllm"
    follows_model_weights = False  # its weights are its own: a trainer's updates never reach it

    def __init__(self, model: Any, tokenizer: Any = None, **llm_options: Any) -> None:
        try:
            import vllm
        except ImportError:
            raise UsageError("the vllm engine needs vLLM, which is not installed",
                             "install the extra: pip install 'atrl[vllm]'") from None
        self._vllm = vllm
        self.tokenizer = tokenizer
        options = {"logprobs_mode": "processed_logprobs", **llm_options}
        self.llm = vllm.LLM(model=_model_path(model), **options)

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
        """Continue each prompt with vLLM; `pad_token_id` is unused (vLLM does not pad)."""
        check_request(prompts, max_new_tokens, temperature, top_p)
        params = [
            self._vllm.SamplingParams(
                n=1,
                temperature=temperature,
                top_p=top_p,
                top_k=-1 if temperature > 0 else 1,
                max_tokens=max_new_tokens,
                seed=None if seed is None else seed + i,
                stop_token_ids=list(eos_token_ids),
                ignore_eos=True,
                logprobs=0,
            )
            for i in range(len(prompts))
        ]
        requests = [{"prompt_token_ids": list(p)} for p in prompts]
        results = self.llm.generate(requests, params, use_tqdm=False)
        outputs: list[EngineOutput] = []
        for res in results:
            comp = res.outputs[0]
            ids = [int(t) for t in comp.token_ids]
            lps = [float(step[tok].logprob) for tok, step in zip(ids, comp.logprobs or [], strict=False)]
            reason = STOP if ids and ids[-1] in set(eos_token_ids) else LENGTH
            outputs.append(EngineOutput(ids, lps, reason))
        return outputs
