"""`OpenAIPolicy`: any OpenAI-compatible `/v1/chat/completions` server (vLLM, SGLang,
llama.cpp, `transformers serve`), spoken to with plain HTTP (no SDK).

Requests run concurrently (a thread pool of `concurrency`), each retried with exponential
backoff on connection errors, timeouts, 5xx and 429. `logprobs: true` is always requested; a
server that ignores it yields `Generation.logprobs = None`.

Token counting: with `tokenizer=DIR` the tokenizer (and chat template) of that local directory is
used. Otherwise tokens are *approximated* with `atrl.policy.simple_tokenizer` (word/punctuation
pieces cut into ≤ 4-byte chunks: roughly one token per 3–4 characters of English), and `render`
uses its simple ChatML template — budgets are then estimates, not the server's exact counts.
A response's token ids are this tokenizer's ids of its text; the server's log-probs are kept only
when they come one per such token (else `logprobs=None`).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from atrl.errors import UsageError
from atrl.policy import simple_tokenizer
from atrl.policy.base import Generation, GenerationRequest, Message, SamplingParams

try:  # the HTTP client that transformers' hub library installs; named httpx2 in some environments
    import httpx
except ImportError:  # pragma: no cover - depends on the environment
    import httpx2 as httpx  # type: ignore[no-redef]

RETRY_STATUS = {429, 500, 502, 503, 504}


class OpenAIPolicy:
    """`base_url` is the server root (with or without `/v1`); `model` the served model's name;
    the API key (if any) is read from the environment variable `api_key_env`. `timeout` is in
    seconds per request."""

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", concurrency: int = 8,
                 retries: int = 4, timeout: float = 600.0, tokenizer: str | Path | None = None,
                 backoff: float = 0.5) -> None:
        root = base_url.rstrip("/")
        self.base_url = root if root.endswith("/v1") else root + "/v1"
        self.model = model
        self.name = f"openai:{model}"
        self.concurrency, self.retries, self.timeout, self.backoff = concurrency, retries, timeout, backoff
        key = os.environ.get(api_key_env)
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._tokenizer = None
        if tokenizer is not None:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(str(tokenizer))

    # -- Policy: text <-> tokens --------------------------------------------------------------
    def render(self, messages: list[Message], add_generation_prompt: bool) -> str:
        tok = self._tokenizer
        if tok is not None and getattr(tok, "chat_template", None):
            chat = [{"role": m.role, "content": m.content} for m in messages]
            return tok.apply_chat_template(chat, tokenize=False, add_generation_prompt=add_generation_prompt)
        return simple_tokenizer.render_chatml(messages, add_generation_prompt)

    def tokenize(self, text: str) -> list[int]:
        if self._tokenizer is not None:
            return list(self._tokenizer.encode(text, add_special_tokens=False))
        return simple_tokenizer.tokenize(text)

    def detokenize(self, ids: list[int]) -> str:
        if self._tokenizer is not None:
            return self._tokenizer.decode(ids, skip_special_tokens=False)
        return simple_tokenizer.detokenize(ids)

    # -- Policy: generation ------------------------------------------------------------------
    def generate(self, requests: list[GenerationRequest], params: SamplingParams) -> list[Generation]:
        """One chat completion per request, `concurrency` at a time, results in request order."""
        if not requests:
            return []
        with httpx.Client(timeout=self.timeout, headers=self._headers) as client:
            if len(requests) == 1:
                return [self._complete(client, requests[0], params, 0)]
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
                futures = [pool.submit(self._complete, client, r, params, i) for i, r in enumerate(requests)]
                return [f.result() for f in futures]

    def _payload(self, request: GenerationRequest, params: SamplingParams, index: int) -> dict:
        body: dict = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "logprobs": True,
        }
        if params.seed is not None:
            body["seed"] = params.seed + index  # distinct samples within a batch, reproducible across runs
        return body

    def _post(self, client: httpx.Client, body: dict) -> dict:
        url = f"{self.base_url}/chat/completions"
        delay = self.backoff
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                resp = client.post(url, json=body)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if last:
                    raise UsageError(f"cannot reach {self.base_url}: {exc}",
                                     "start the server or fix --policy") from None
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                if last:
                    raise UsageError(f"no answer from {self.base_url}: {exc}",
                                     "check the server or raise the timeout") from None
            else:
                if resp.status_code == 200:
                    return resp.json()
                if resp.status_code not in RETRY_STATUS or last:
                    raise UsageError(f"{url} answered {resp.status_code}: {resp.text[:300]}",
                                     "check the model name and the server's log")
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    def _complete(self, client: httpx.Client, request: GenerationRequest, params: SamplingParams,
                  index: int) -> Generation:
        data = self._post(client, self._payload(request, params, index))
        choice = data["choices"][0]
        text = (choice.get("message") or {}).get("content") or ""
        finish = "length" if choice.get("finish_reason") == "length" else "stop"
        ids = self.tokenize(text)
        content = (choice.get("logprobs") or {}).get("content") or []
        logprobs = [float(c["logprob"]) for c in content] if content else None
        if logprobs is not None and len(logprobs) != len(ids):
            logprobs = None  # the server's tokens are not ours: keep no misaligned values
        return Generation(text=text, token_ids=ids, logprobs=logprobs, finish_reason=finish)
