"""`atrl sft`: the supervised warm start on (agent prompt → reference Triton solution) pairs.

One run, read top to bottom in `run_sft`:
1. load the start policy in fp32 (`model` spec; a GGUF-loaded model is rebuilt as a plain
   transformers model so it can be saved, see `plain_model`), optionally wrap it in LoRA;
2. build examples (`atrl.rl.sft_data`) from the training part of the split only — reference
   solutions in several prompt variants (unless `solutions: false`), second turns after feedback
   (`repair`), key-relay episodes (`relay`: the credit experiment's tier 2), the reference
   solution after each failed turn of recorded episodes, in their own contexts
   (`repair_contexts`), and ok turns of earlier runs when `trajectories` is set;
   knowledge-base examples are restricted to training tasks too;
3. train: each optimizer step takes `batch_size` examples (a seeded shuffle per epoch),
   micro-batches of `micro_batch_size` right-padded sequences, the loss the token-mean
   cross-entropy over the step's target tokens (assistant tokens only), bf16 autocast on GPU,
   gradient clipping, AdamW with linear warm-up then constant/linear/cosine decay;
4. write `OUT/model` (HF-native, tokenizer beside it: `--policy hf:OUT/model`), with
   `OUT/config.yaml`, `OUT/metrics.jsonl` (one record per step), `OUT/sft_data.jsonl` (one
   line per example) and `OUT/checkpoints/` (a run re-started on the same OUT resumes exactly
   from the newest checkpoint; a finished run only re-writes `OUT/model`).
"""

from __future__ import annotations

import contextlib
import copy
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from atrl.errors import UsageError
from atrl.policy.hf import plain_model
from atrl.rl.chassis import Chassis, LoraSettings, OptimSettings, adapter_base_spec
from atrl.rl.sft_data import (
    BuildReport,
    SftExample,
    context_repair_examples,
    relay_demonstrations,
    repair_examples,
    solution_examples,
    trajectory_examples,
)
from atrl.rl.target_logits import target_logits

SAVE_DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32}


class SftConfig(BaseModel):
    """A supervised fine-tuning run. Every field has a default and a one-line description."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str = Field(
        "smollm2-135m", description="start policy: smollm2-135m | hf:PATH | tiny-random[:SEED]"
    )
    split: str = Field("configs/split-builtin.yaml", description="train / held-out split file")
    split_part: Literal["train"] = Field("train", description="the part learned from (only train: no leaks)")
    platforms: list[str] = Field(
        ["cuda"], description="platforms named in the system prompt (one variant each)"
    )
    presets: list[str] = Field(["full", "small"], description="task size presets shown (one variant each)")
    kb_variants: list[bool] = Field([True, False], description="prompts with / without knowledge-base text")
    kb_tokens: int = Field(600, ge=1, description="token budget of the knowledge-base text")
    agent: dict[str, Any] = Field(
        default_factory=dict, description="AgentConfig fields (context_budget, ...)"
    )
    trajectories: list[str] = Field(default_factory=list, description="trajectory files or run dirs for RFT")
    rft_max_per_task: int | None = Field(None, description="cap on RFT examples per task (null: none)")
    rft_min_turn: int = Field(0, ge=0, description="RFT takes ok turns from this turn index on (1: later turns only)")
    repair_contexts: list[str] = Field(
        default_factory=list,
        description="trajectory files or run dirs: after each failed turn, the next turn's own context with the reference solution as target",
    )
    repair: bool = Field(
        False, description="add second-turn examples: fix a wrong variant after its feedback, keep a right kernel"
    )
    repair_backend: str = Field("interpreter", description="backend that judges the repair examples' first turns")
    solutions: bool = Field(True, description="the reference-solution examples (false: only the other sources)")
    relay: int = Field(
        0, ge=0, description="key-relay episodes per task (tier 2's warm start): a summary keeps the key, an answer writes it"
    )

    epochs: int = Field(3, ge=1, description="passes over the examples")
    max_steps: int | None = Field(None, description="optimizer steps (null: epochs × steps per epoch)")
    batch_size: int = Field(8, ge=1, description="examples per optimizer step")
    micro_batch_size: int = Field(4, ge=1, description="sequences per forward/backward")
    lr: float = Field(5e-5, gt=0.0, description="peak learning rate (AdamW)")
    weight_decay: float = Field(0.0, ge=0.0, description="AdamW weight decay")
    betas: tuple[float, float] = Field((0.9, 0.999), description="AdamW betas")
    warmup_steps: int = Field(10, ge=0, description="optimizer steps of linear warm-up")
    schedule: Literal["constant", "linear", "cosine"] = Field("cosine", description="decay after warm-up")
    min_lr_ratio: float = Field(0.1, ge=0.0, le=1.0, description="final lr / peak lr for linear and cosine")
    grad_clip: float | None = Field(1.0, description="max global grad norm (null: no clipping)")
    bf16: bool = Field(True, description="bf16 autocast for forward passes on GPU")
    seed: int = Field(0, description="seeds the shuffle and initialisation")

    lora: bool = Field(False, description="train a LoRA adapter (peft), merged into OUT/model at the end")
    lora_r: int = Field(16, ge=1, description="LoRA rank")
    lora_alpha: int = Field(32, ge=1, description="LoRA alpha")
    lora_dropout: float = Field(0.0, ge=0.0, lt=1.0, description="LoRA dropout")
    lora_target_modules: list[str] | str = Field("all-linear", description="modules that get adapters")

    out_dir: str = Field("runs/sft", description="run directory: model, config, metrics, checkpoints")
    save_every: int = Field(100, ge=1, description="checkpoint every this many steps (and at the end)")
    keep_checkpoints: int = Field(1, ge=1, description="checkpoints kept on disk")
    save_dtype: Literal["bfloat16", "float32"] = Field("bfloat16", description="dtype of OUT/model's weights")

    @field_validator("agent")
    @classmethod
    def _known_agent_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        import dataclasses

        from atrl.agent.config import AgentConfig

        unknown = sorted(set(value) - {f.name for f in dataclasses.fields(AgentConfig)})
        varied = sorted(set(value) & {"platform", "preset", "kb"})
        if unknown or varied:
            raise ValueError(
                f"agent key(s) {', '.join(unknown + varied)} not allowed here "
                "(platform/preset/kb come from platforms, presets, kb_variants)"
            )
        return value


def load_sft_config(path: str | Path | None, overrides: list[str] | None = None, **fields: Any) -> SftConfig:
    """Read a YAML config, apply `key=value` overrides, then explicit `fields` (e.g. out_dir)."""
    from atrl.rl.config import _merge, parse_overrides, read_yaml_mapping

    data = read_yaml_mapping(path) if path is not None else {}
    data = _merge(
        _merge(data, parse_overrides(overrides or [])), {k: v for k, v in fields.items() if v is not None}
    )
    try:
        return SftConfig(**data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "config"
        raise UsageError(
            f"config key {key!r}: {first['msg']}", "fix the value in the YAML file or --set"
        ) from None


# -- the model ---------------------------------------------------------------------------------
def load_start_policy(spec: str, out: Path, lora: bool = False) -> Any:
    """The policy to fine-tune, with fp32 weights: `tiny-random[:SEED]` (a tiny random model
    built in OUT/tiny-model, for CPU runs) or any `hf` spec of `atrl.policy.load_policy`.
    With `lora`, a start that is a LoRA adapter is loaded unmerged and trainable, so that the
    training continues it (as `atrl train` does): the checkpoints' adapters then hold the whole
    adaptation and record the adapter's own base. Merged, a second adapter would be stacked on
    it, and a checkpoint's adapter alone would lose the first."""
    from atrl.policy.hf import HFPolicy

    if spec == "tiny-random" or spec.startswith("tiny-random:"):
        from atrl.rl.tiny import build_tiny_model

        directory = out / "tiny-model"
        if not (directory / "config.json").exists():
            build_tiny_model(directory, int(spec.split(":", 1)[1]) if ":" in spec else 0)
        policy: Any = HFPolicy(directory, dtype=torch.float32, name=spec, engine=None)  # no rollouts in SFT
    else:
        from atrl.policy import load_policy

        if not (spec in ("smollm2-135m", "smollm2-135m-triton") or spec.startswith("hf:")):
            raise UsageError(
                f"sft needs a local model, got {spec!r}",
                "use smollm2-135m, smollm2-135m-triton (the shipped adapter), hf:PATH or tiny-random",
            )
        from atrl.policy.adapters import start_adapter

        trainable = {"adapter_trainable": True} if lora and start_adapter(spec) is not None else {}
        policy = load_policy(spec, dtype=torch.float32, **trainable)
    policy.model = plain_model(policy.model)
    return policy


def save_model(model: torch.nn.Module, tokenizer: Any, directory: Path, dtype: torch.dtype) -> Path:
    """Write an HF-native model directory (LoRA merged in) with the tokenizer beside it."""
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    if next(model.parameters()).dtype != dtype:  # a copy: the caller's model keeps its precision
        model = copy.deepcopy(model).to(dtype)
    model.save_pretrained(directory)
    if tokenizer is not None:
        tokenizer.save_pretrained(directory)
    return directory


# -- training ----------------------------------------------------------------------------------
def collate(examples: list[SftExample], pad_id: int, device: torch.device) -> dict[str, torch.Tensor]:
    """Right-padded `input_ids`, `attention_mask` and float `loss_mask`, each [B, T]."""
    width = max(len(e.token_ids) for e in examples)

    def pad(rows: list[list], fill: int) -> list[list]:
        return [r + [fill] * (width - len(r)) for r in rows]

    return {
        "input_ids": torch.tensor(pad([e.token_ids for e in examples], pad_id), device=device),
        "attention_mask": torch.tensor(pad([[1] * len(e.token_ids) for e in examples], 0), device=device),
        "loss_mask": torch.tensor(pad([[float(m) for m in e.loss_mask] for e in examples], 0), device=device),
    }


def target_nll_sum(model: torch.nn.Module, batch: dict[str, torch.Tensor], autocast: bool) -> torch.Tensor:
    """Sum over target tokens of −log p(token | tokens before it); token p is scored by the
    logits at p − 1 (so position 0 is never a target), projected at the targets only."""
    device = batch["input_ids"].device
    on_gpu = autocast and device.type == "cuda"
    with torch.autocast("cuda", dtype=torch.bfloat16) if on_gpu else contextlib.nullcontext():
        logits, targets = target_logits(model, batch["input_ids"], batch["attention_mask"], batch["loss_mask"])
    weights = batch["loss_mask"][:, 1:][batch["loss_mask"][:, 1:].bool()]
    nll = torch.nn.functional.cross_entropy(logits.float(), targets, reduction="none")
    return (nll * weights).sum()


def step_batch(n: int, step: int, batch_size: int, seed: int) -> list[int]:
    """Example indices of optimizer step `step`: epoch e = step // steps_per_epoch walks a
    permutation seeded by (seed, e), so a resumed run takes the same batches."""
    per_epoch = math.ceil(n / batch_size)
    epoch, at = divmod(step, per_epoch)
    order = list(range(n))
    random.Random(f"{seed}:{epoch}").shuffle(order)
    return order[at * batch_size : (at + 1) * batch_size]


@dataclass
class SftResult:
    out_dir: Path
    model_dir: Path
    steps: int
    examples: int
    report: BuildReport
    last_loss: float | None


def build_examples(config: SftConfig, policy: Any) -> tuple[list[SftExample], BuildReport]:
    """The run's examples from the split's training part: reference solutions, repair and relay
    episodes, RFT turns (each source as the config asks)."""
    from atrl.kb.inject import KnowledgeInjector
    from atrl.rl.split import read_split, split_tasks, validate_split
    from atrl.tasks.registry import load_suite

    split = read_split(config.split)
    tasks = load_suite(split.suite).tasks
    validate_split(split, tasks, config.split)
    train = split_tasks(split, config.split_part, tasks)
    train_ids = {t.id for t in train}
    injectors: dict[str, KnowledgeInjector] = {}

    def knowledge_for(platform: str) -> KnowledgeInjector:
        if platform not in injectors:
            injectors[platform] = KnowledgeInjector(
                platform,
                budget_tokens=config.kb_tokens,
                count_tokens=lambda text: len(policy.tokenize(text)),
                allow_example_tasks=sorted(train_ids),
            )
        return injectors[platform]

    report = BuildReport()
    examples = solution_examples(
        policy,
        train,
        config.agent,
        config.platforms,
        config.presets,
        config.kb_variants,
        knowledge_for,
        report,
    ) if config.solutions else []
    if config.relay:
        examples += relay_demonstrations(policy, train, config.agent, config.platforms[0], config.presets[0],
                                         config.relay, report, config.seed)
    if config.repair:
        examples += _repair(config, policy, train, knowledge_for, report)
    if config.repair_contexts:
        examples += context_repair_examples(policy, config.repair_contexts, {t.id: t for t in train}, report)
    if config.trajectories:
        examples += trajectory_examples(
            policy, config.trajectories, train_ids, report, config.rft_max_per_task, config.rft_min_turn
        )
    if not examples:
        raise UsageError(
            f"no SFT examples from the {config.split_part} part of {config.split} "
            f"(skipped: {dict(report.skipped)})",
            "raise agent.context_budget or max_response_tokens",
        )
    return examples, report


def _repair(config: SftConfig, policy: Any, train: list, knowledge_for: Callable, report: BuildReport) -> list:
    """The repair and keep examples (`repair_examples`), their first turns judged by a harness on
    `config.repair_backend` at its own sizes, for the first platform; with knowledge-base text
    when the variants include it."""
    from atrl.harness.api import Harness

    platform = config.platforms[0]
    with Harness(backend=config.repair_backend, workers=2) as harness:
        knowledge = knowledge_for(platform) if any(config.kb_variants) else None
        return repair_examples(policy, train, config.agent, platform, harness.preset or "full", harness.evaluate,
                               knowledge, report)


def run_sft(
    config: SftConfig,
    policy: Any | None = None,
    on_step: Callable[[dict], None] | None = None,
    examples: list[SftExample] | None = None,
) -> SftResult:
    """Run (or resume) supervised fine-tuning; returns where the model was written. `policy`
    replaces `config.model` with a loaded policy and `examples` the built data (tests,
    notebooks); `on_step(record)` sees each step's metrics with `total_steps` added."""
    from atrl.jsonio import Journal
    from atrl.rl.metrics import MetricsLog

    out = Path(config.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    random.seed(config.seed)
    torch.manual_seed(config.seed)
    if policy is None:
        policy = load_start_policy(config.model, out, config.lora)
    report = BuildReport()
    if examples is None:
        examples, report = build_examples(config, policy)
    per_epoch = math.ceil(len(examples) / config.batch_size)
    total = config.max_steps or config.epochs * per_epoch
    lora = (LoraSettings(config.lora_r, config.lora_alpha, config.lora_dropout, config.lora_target_modules)
            if config.lora else None)
    chassis = Chassis(
        policy.model,
        OptimSettings(lr=config.lr, total_steps=total, betas=config.betas, weight_decay=config.weight_decay,
                      warmup_steps=config.warmup_steps, schedule=config.schedule, min_lr_ratio=config.min_lr_ratio),
        lora,
    )
    model = chassis.model
    policy.model = chassis.generation_model
    (out / "sft_data.jsonl").unlink(missing_ok=True)
    with Journal(out / "sft_data.jsonl") as journal:
        for example in examples:
            journal.append(example.record())
    (out / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))

    tokenizer = getattr(policy, "tokenizer", None)
    pad = getattr(tokenizer, "pad_token_id", None)
    pad_id = pad if pad is not None else (getattr(tokenizer, "eos_token_id", None) or 0)
    device = next(model.parameters()).device
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = chassis.optimizer
    step = chassis.resume(out)
    metrics = MetricsLog(out, resume_step=step)
    last_loss = None
    model.train()
    try:
        while step < total:
            started = time.perf_counter()
            batch = sorted(
                (examples[i] for i in step_batch(len(examples), step, config.batch_size, config.seed)),
                key=lambda e: len(e.token_ids),
            )
            n_targets = sum(e.num_targets for e in batch)
            lr = optimizer.param_groups[0]["lr"]
            optimizer.zero_grad(set_to_none=True)
            loss_sum = 0.0
            for lo in range(0, len(batch), config.micro_batch_size):
                micro = collate(batch[lo : lo + config.micro_batch_size], pad_id, device)
                nll = target_nll_sum(model, micro, config.bf16)
                (nll / n_targets).backward()
                loss_sum += float(nll.detach())
            norm = torch.nn.utils.clip_grad_norm_(trainable, config.grad_clip or float("inf"))
            optimizer.step()
            chassis.scheduler.step()
            step += 1
            last_loss = loss_sum / n_targets
            record = {
                "step": step,
                "epoch": (step - 1) // per_epoch,
                "loss": last_loss,
                "lr": lr,
                "grad_norm": float(norm),
                "examples": len(batch),
                "target_tokens": n_targets,
                "tokens": sum(len(e.token_ids) for e in batch),
                "time_step_s": time.perf_counter() - started,
            }
            metrics.append(record)
            if on_step is not None:
                on_step(record | {"total_steps": total})
            if step % config.save_every == 0 or step == total:
                chassis.save(out, step, tokenizer, config.keep_checkpoints, base_spec=adapter_base_spec(config.model, out))
    finally:
        metrics.close()
    model.eval()
    model_dir = save_model(model, tokenizer, out / "model", SAVE_DTYPES[config.save_dtype])
    return SftResult(out, model_dir, step, len(examples), report, last_loss)
