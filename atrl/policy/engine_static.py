"""`StaticCacheEngine`: fast batched rollouts for small transformers causal LMs.

Why: for a small model the per-token decode step of `model.generate` is bound by kernel launches
and Python, not by the GPU. This engine prefills the left-padded batch into a transformers
`StaticCache` (fixed addresses), then runs its own decode loop whose whole step — forward pass,
attention mask, tempered softmax, top-p, sampling, log-prob, bookkeeping — only updates
preallocated buffers in place. On CUDA that step is captured once into a CUDA graph (after two
eager warm-up steps) and replayed for every later token; on CPU it runs eagerly and gives the
same tokens. The graph and cache are kept per (batch, cache-length bucket, new-token bucket,
sampling mode) and reused by later calls, so only the first call of a shape pays the capture.

Sampling: `argmax(p / q)` with `q ~ Exp(1)` noise drawn from the engine's own generator, seeded
per call (the exponential race: a sample from `p`), so a seed reproduces a run and torch's
global generators are left alone. Log-probs are under `softmax(logits / temperature)` (greedy:
`softmax(logits)`), before top-p.

Limits: decoder-only models with full attention in every layer (sliding-window layers would need
their own masks) and an attention implementation that takes 4D additive masks ("sdpa", "eager");
other models raise `UsageError` — use the "plain" engine. Rows keep decoding after their
end-of-sequence token until every row has one (checked every `check_every` steps); what follows a
row's first EOS is dropped. Every step attends over the whole cache-length bucket (masked), which
costs a little on CPU and nothing that matters next to launch overhead on a GPU. Memory: one KV
cache of batch × cache-length tokens per kept shape (`max_states`, default 2).

`compile`: the decode step of a 135M model is still bound by its many small kernels per layer
inside the graph (norms, rotary, activations, cache writes), not by FLOPs or bytes; with
`compile=True` the model's forward used by the decode step is `torch.compile`d (inductor fuses
those into a few kernels per layer) and the compiled step is then captured as above. Each new
(batch, cache length) shape compiles once (tens of seconds), so this suits runs with few shapes;
the prefill stays eager (its width changes with every call).
"""

from __future__ import annotations

import inspect
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import torch

from atrl.errors import UsageError
from atrl.policy.engine_base import EngineOutput, check_request, finish_row

WARMUP_STEPS = 2  # eager steps on a side stream before capture (lazy allocations, kernel choice)


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


@dataclass
class _DecodeState:
    """The static buffers of one shape; a captured graph reads and writes only these."""

    cache: Any
    mode: str  # "greedy" | "sample" | "top_p"
    valid: torch.Tensor  # [B, L] bool: cache slot holds a real token (prompt) or a future one
    slots: torch.Tensor  # [1, L] long: 0..L-1
    ids: torch.Tensor  # [B, 1] long: token fed to the next step
    position_ids: torch.Tensor  # [B, 1] long: its position in its own row
    pos: torch.Tensor  # [1] long: cache slot the next step writes
    step: torch.Tensor  # [1] long: index of the next generated token
    tokens: torch.Tensor  # [B, N] long
    logprobs: torch.Tensor  # [B, N] float32
    done: torch.Tensor  # [B] bool: row has produced an EOS
    is_eos: torch.Tensor  # [V] bool
    temperature: torch.Tensor  # [] float32
    top_p: torch.Tensor  # [] float32
    noise: torch.Tensor  # [B, V] float32, Exp(1) draws for the next sample
    graph: Any = None
    warm: int = 0


class StaticCacheEngine:
    """Static-KV-cache decode loop, CUDA-graph captured on GPU (see the module docstring).

    `model`: a transformers causal LM (any device, any dtype). `cuda_graph`: capture the decode
    step (default: when the model is on CUDA). `length_bucket`: cache lengths and new-token
    counts are rounded up to a multiple of it so that nearby prompt lengths share one graph.
    `check_every`: decode steps between checks (a device sync) for "every row finished".
    `max_states`: shapes whose cache and graph are kept. `compile`: `torch.compile` the decode
    step's forward (True: inductor; a string: that `torch.compile` backend, e.g. "eager" in tests).
    `gqa_decode`: switch an "sdpa" model to `atrl.policy.attention`'s "atrl_sdpa", which runs
    single-token steps on the unexpanded key/value heads (same results, less memory traffic).
    """

    name = "static"

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        cuda_graph: bool | None = None,
        length_bucket: int = 128,
        check_every: int = 8,
        max_states: int = 2,
        compile: bool | str = False,
        gqa_decode: bool = True,
    ) -> None:
        config = model.config.get_text_config(decoder=True) if hasattr(model.config, "get_text_config") else model.config
        layer_types = getattr(config, "layer_types", None) or []
        if any(t != "full_attention" for t in layer_types):
            raise UsageError(
                f"the static engine needs full attention in every layer; this model has {sorted(set(layer_types))}",
                "use the 'plain' engine for it",
            )
        attn = getattr(model.config, "_attn_implementation", None) or "sdpa"
        if attn == "sdpa" and gqa_decode:
            from atrl.policy.attention import use_gqa_decode_attention

            if use_gqa_decode_attention(model):
                attn = model.config._attn_implementation
        if attn not in ("sdpa", "eager", "atrl_sdpa"):
            raise UsageError(f"the static engine passes 4D additive masks, which attention {attn!r} does not take",
                             "load the model with attn_implementation='sdpa' or use the 'plain' engine")
        self.model = model
        self.tokenizer = tokenizer
        self.device: torch.device = model.get_input_embeddings().weight.device
        self.dtype: torch.dtype = model.get_input_embeddings().weight.dtype
        self.vocab = int(model.get_output_embeddings().weight.shape[0])
        self.cuda_graph = self.device.type == "cuda" if cuda_graph is None else bool(cuda_graph)
        if self.cuda_graph and self.device.type != "cuda":
            raise UsageError("CUDA graphs need the model on a CUDA device", "pass cuda_graph=False")
        self.length_bucket = max(1, length_bucket)
        self.check_every = max(1, check_every) if self.device.type == "cuda" else 1
        self.max_states = max(1, max_states)
        params = inspect.signature(model.forward).parameters
        # transformers renamed `past_key_values` to `cache` (the old name is deprecated)
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self._keep_logits = "logits_to_keep" in params
        self._states: OrderedDict[tuple[int, int, int, str], _DecodeState] = OrderedDict()
        self._decode_forward = model.forward
        if compile:
            backend = "inductor" if compile is True else str(compile)
            self._decode_forward = torch.compile(model.forward, backend=backend, dynamic=False)
        self._mask_min = torch.finfo(self.dtype).min if self.dtype.is_floating_point else torch.finfo(torch.float32).min

    # ---- public -------------------------------------------------------------------------------

    @torch.inference_mode()
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
        """Continue each prompt; see `GenerationEngine` for the contract."""
        check_request(prompts, max_new_tokens, temperature, top_p)
        mode = "greedy" if temperature == 0 else ("top_p" if top_p < 1 else "sample")
        width = max(len(p) for p in prompts)
        st = self._state(len(prompts), width + max_new_tokens, max_new_tokens, mode)
        gen = torch.Generator(device=self.device)
        gen.manual_seed(int(torch.randint(0, 2**62, (1,)).item()) if seed is None else seed)

        self._prefill(st, prompts, pad_token_id, temperature, top_p, eos_token_ids, gen)
        steps = 1
        while steps < max_new_tokens:
            if eos_token_ids and steps % self.check_every == 0 and bool(st.done.all()):
                break
            if mode != "greedy":
                st.noise.exponential_(generator=gen)
            self._advance(st)
            steps += 1
        tokens = st.tokens[:, :steps].tolist()
        logprobs = st.logprobs[:, :steps].tolist()
        return [finish_row(t, lp, eos_token_ids) for t, lp in zip(tokens, logprobs, strict=True)]

    def release(self) -> None:
        """Drop every kept shape's KV cache and graph (a trainer does before its update, so the
        step peaks at the larger phase, not their sum); the next call of a shape builds it again."""
        self._states.clear()

    # ---- states -------------------------------------------------------------------------------

    def _state(self, batch: int, length: int, new_tokens: int, mode: str) -> _DecodeState:
        """The kept state for this shape, or a new one (evicting the oldest beyond `max_states`)."""
        from transformers import StaticCache

        key = (batch, _round_up(length, self.length_bucket), _round_up(new_tokens, self.length_bucket), mode)
        if key in self._states:
            self._states.move_to_end(key)
            return self._states[key]
        while len(self._states) >= self.max_states:
            self._states.popitem(last=False)
        b, cache_len, n_cap, _ = key
        dev, vocab = self.device, self.vocab
        st = _DecodeState(
            cache=StaticCache(config=self.model.config, max_cache_len=cache_len),
            mode=mode,
            valid=torch.ones((b, cache_len), dtype=torch.bool, device=dev),
            slots=torch.arange(cache_len, device=dev)[None, :],
            ids=torch.zeros((b, 1), dtype=torch.long, device=dev),
            position_ids=torch.zeros((b, 1), dtype=torch.long, device=dev),
            pos=torch.zeros((1,), dtype=torch.long, device=dev),
            step=torch.zeros((1,), dtype=torch.long, device=dev),
            tokens=torch.zeros((b, n_cap), dtype=torch.long, device=dev),
            logprobs=torch.zeros((b, n_cap), dtype=torch.float32, device=dev),
            done=torch.zeros((b,), dtype=torch.bool, device=dev),
            is_eos=torch.zeros((vocab,), dtype=torch.bool, device=dev),
            temperature=torch.ones((), dtype=torch.float32, device=dev),
            top_p=torch.ones((), dtype=torch.float32, device=dev),
            noise=torch.ones((b, vocab) if mode != "greedy" else (1, 1), dtype=torch.float32, device=dev),
        )
        self._states[key] = st
        return st

    # ---- the loop's pieces --------------------------------------------------------------------

    def _forward(
        self, st: _DecodeState, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, decode: bool = False
    ) -> torch.Tensor:
        """Last-position logits `[B, V]` (float32) of one forward pass that appends to the cache."""
        kwargs: dict[str, Any] = {self._cache_kw: st.cache}
        if self._keep_logits:
            kwargs["logits_to_keep"] = 1
        forward = self._decode_forward if decode else self.model
        out = forward(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **kwargs)
        return out.logits[:, -1, :].float()

    def _additive(self, allowed: torch.Tensor) -> torch.Tensor:
        """0 where attention is allowed, the dtype's minimum elsewhere (finite: no NaN rows)."""
        return (~allowed).to(self.dtype) * self._mask_min

    def _pick(self, st: _DecodeState, logits: torch.Tensor) -> None:
        """Choose the next token of every row from `logits` [B, V] and record it."""
        if st.mode == "greedy":
            logp = torch.log_softmax(logits, dim=-1)
            tok = logits.argmax(dim=-1)
        else:
            logp = torch.log_softmax(logits / st.temperature, dim=-1)
            probs = logp.exp()
            if st.mode == "top_p":
                sorted_p, order = probs.sort(dim=-1, descending=True)
                # drop a token once the more likely ones already reach top_p (the first always stays)
                drop_sorted = (sorted_p.cumsum(dim=-1) - sorted_p) >= st.top_p
                drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
                probs = probs.masked_fill(drop, 0.0)
            tok = (probs / st.noise).argmax(dim=-1)
        lp = logp.gather(-1, tok[:, None])
        st.tokens.index_copy_(1, st.step, tok[:, None])
        st.logprobs.index_copy_(1, st.step, lp)
        st.step.add_(1)
        st.done.logical_or_(st.is_eos[tok])
        st.ids.copy_(tok[:, None])

    def _prefill(
        self,
        st: _DecodeState,
        prompts: list[list[int]],
        pad_token_id: int,
        temperature: float,
        top_p: float,
        eos_token_ids: list[int],
        gen: torch.Generator,
    ) -> None:
        """Reset the state for this call, run the prompt forward and pick the first token."""
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), pad_token_id, dtype=torch.long)
        real = torch.zeros((len(prompts), width), dtype=torch.bool)
        for row, prompt in enumerate(prompts):
            ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
            real[row, width - len(prompt) :] = True
        ids, real = ids.to(self.device), real.to(self.device)

        st.cache.reset()
        st.valid.fill_(True)
        st.valid[:, :width] = real
        st.step.zero_()
        st.done.zero_()
        st.is_eos.zero_()
        eos = [e for e in eos_token_ids if 0 <= e < self.vocab]
        if eos:
            st.is_eos[torch.tensor(eos, device=self.device)] = True
        st.temperature.fill_(temperature if temperature > 0 else 1.0)
        st.top_p.fill_(top_p)
        if st.mode != "greedy":
            st.noise.exponential_(generator=gen)

        q_slots = torch.arange(width, device=self.device)
        allowed = st.valid[:, None, :] & (st.slots[None, :, :] <= q_slots[None, :, None])
        allowed |= st.slots[None, :, :] == q_slots[None, :, None]  # pad queries see themselves
        positions = (real.long().cumsum(dim=-1) - 1).clamp(min=0)
        logits = self._forward(st, ids, self._additive(allowed)[:, None], positions)
        self._pick(st, logits)
        st.position_ids.copy_(positions[:, -1:] + 1)
        st.pos.fill_(width)

    def _decode_step(self, st: _DecodeState) -> None:
        """One token for every row, reading and writing only `st`'s buffers (graph-safe)."""
        allowed = st.valid & (st.slots <= st.pos)
        logits = self._forward(st, st.ids, self._additive(allowed)[:, None, None, :], st.position_ids, decode=True)
        self._pick(st, logits)
        st.position_ids.add_(1)
        st.pos.add_(1)

    def _advance(self, st: _DecodeState) -> None:
        """Run one decode step: replay the graph, or warm up / capture it, or run eagerly."""
        if st.graph is not None:
            st.graph.replay()
            return
        if not self.cuda_graph:
            self._decode_step(st)
            return
        if st.warm < WARMUP_STEPS:
            side = torch.cuda.Stream(device=self.device)
            side.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(side):
                self._decode_step(st)
            torch.cuda.current_stream(self.device).wait_stream(side)
            st.warm += 1
            return
        graph = torch.cuda.CUDAGraph()
        try:
            # capture records the step without running it, so the state is unchanged on failure
            with torch.cuda.graph(graph):
                self._decode_step(st)
        except RuntimeError as err:
            warnings.warn(f"CUDA graph capture failed, decoding eagerly: {err}", RuntimeWarning, stacklevel=2)
            self.cuda_graph = False
            self._decode_step(st)
            return
        st.graph = graph
        graph.replay()
