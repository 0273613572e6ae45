"""OpenAIPolicy against a real OpenAI-compatible server (`transformers serve`) and a dead URL."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atrl.errors import UsageError
from atrl.policy.base import GenerationRequest, Message, SamplingParams
from atrl.policy.openai import OpenAIPolicy, httpx
from atrl.policy.simple_tokenizer import tokenize


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_server_is_a_usage_error_quickly():
    url = f"http://127.0.0.1:{free_port()}"
    policy = OpenAIPolicy(url, "m", retries=2, backoff=0.01, timeout=5)
    started = time.monotonic()
    with pytest.raises(UsageError, match=r"cannot reach http://127\.0\.0\.1:\d+/v1: .* start the server or fix --policy"):
        policy.generate([GenerationRequest(messages=[Message("user", "hi")])], SamplingParams(max_tokens=4))
    assert time.monotonic() - started < 5


def test_without_a_tokenizer_tokens_are_the_simple_approximation():
    policy = OpenAIPolicy("http://127.0.0.1:1", "m")
    assert policy.tokenize("def f(): pass") == tokenize("def f(): pass")
    assert policy.render([Message("user", "x")], True) == "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n"


def _serve_command() -> list[str] | None:
    exe = shutil.which("transformers") or str(Path(sys.executable).with_name("transformers"))
    if not Path(exe).exists():
        return None
    probe = subprocess.run([exe, "serve", "--help"], capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        return None
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        return None
    return [exe, "serve"]


@pytest.mark.slow
def test_a_real_transformers_serve_server_answers_a_batch(tiny_model_dir):
    command = _serve_command()
    if command is None:
        pytest.skip('`transformers serve` is unavailable: pip install "transformers[serving]"')
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([*command, str(tiny_model_dir), "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, f"server exited: {server.stderr.read()[-2000:]}"
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "server did not come up within 120 s"
            time.sleep(1)
        policy = OpenAIPolicy(url, str(tiny_model_dir), tokenizer=tiny_model_dir, concurrency=2)
        requests = [GenerationRequest(messages=[Message("system", "Write Triton."), Message("user", q)])
                    for q in ("relu", "softmax over rows")]
        gens = policy.generate(requests, SamplingParams(temperature=0.0, max_tokens=8))
        assert len(gens) == 2
        for gen in gens:
            assert isinstance(gen.text, str) and gen.finish_reason in ("stop", "length")
            assert gen.token_ids == policy.tokenize(gen.text)
            assert gen.logprobs is None or len(gen.logprobs) == len(gen.token_ids)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
