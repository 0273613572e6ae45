"""The training chassis shared by `atrl sft` and `atrl train`: what is trained, in which
precision, with which optimizer and schedule, and how it is checkpointed and resumed.

Precision (ATRL-SPEC, "Training mechanics"). Trainable parameters are always fp32:
- full fine-tuning: when the policy's model holds low-precision weights (bf16 on a GPU), the
  chassis trains an fp32 copy of it (master weights; forwards run under bf16 autocast) and the
  policy keeps generating with its own low-precision copy, refreshed from the master after every
  optimizer step (`sync_policy`). A bf16 weight moves only when a step reaches half an ulp
  (≈ |w|/256), so AdamW on bf16 weights at RL learning rates leaves most of them unchanged.
  When the policy's model is already fp32 (CPU), master and policy are one module.
- LoRA: peft adapters in fp32 over the frozen base (in the policy's dtype); the policy generates
  with the same module, adapters included, so there is nothing to sync. A policy that starts
  from an adapter (loaded unmerged, `HFPolicy(adapter_trainable=True)`) continues that adapter.
`fp32_master=False` trains a low-precision model directly; it exists only to measure what the
master weights change (benchmarks/update_precision.py) and warns when it takes effect.

Every optimizer step can be measured (`UpdateProbe`): the norm of the update, the fraction of
trainable parameters that changed and the fraction of the weights the policy samples with that
changed (they differ when bf16 rounding swallows small updates).
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from atrl.errors import UsageError
from atrl.policy.adapters import write_base_config, write_base_spec
from atrl.rl.checkpoint import is_peft, latest_checkpoint, load_checkpoint, save_checkpoint
from atrl.rl.schedule import lr_factor


@dataclass
class LoraSettings:
    r: int = 16
    alpha: int = 32
    dropout: float = 0.0
    target_modules: list[str] | str = "all-linear"


@dataclass
class OptimSettings:
    lr: float
    total_steps: int  # optimizer steps of the whole run (the schedule's length)
    betas: tuple[float, float] = (0.9, 0.999)
    weight_decay: float = 0.0
    warmup_steps: int = 0
    schedule: str = "constant"
    min_lr_ratio: float = 0.0


def add_lora(model: torch.nn.Module, lora: LoraSettings) -> torch.nn.Module:
    """`model` wrapped in a peft LoRA adapter whose trainable weights are fp32."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise UsageError("LoRA training needs peft", "install the extra: pip install 'atrl[train]'") from exc
    config = LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                        target_modules=lora.target_modules, task_type="CAUSAL_LM")
    return _fp32_adapters(get_peft_model(model, config))


def _fp32_adapters(model: torch.nn.Module) -> torch.nn.Module:
    for param in model.parameters():
        if param.requires_grad and param.dtype != torch.float32:
            param.data = param.data.float()
    return model


def adapter_base_spec(model_spec: str, out_dir: Path) -> str:
    """The spec an adapter records for its base: the training spec, except that a tiny random
    model (built in the run directory) is named by its directory, and that a continued adapter
    (the training started from one) records the base of the adapter it continued."""
    from atrl.policy.adapters import base_policy_spec, start_adapter

    if model_spec == "tiny-random" or model_spec.startswith("tiny-random:"):
        return f"hf:{Path(out_dir) / 'tiny-model'}"
    adapter = start_adapter(model_spec)
    return base_policy_spec(adapter) if adapter is not None else model_spec


def _trainable(model: torch.nn.Module) -> list[tuple[str, torch.nn.Parameter]]:
    return [(name, p) for name, p in model.named_parameters() if p.requires_grad]


class Chassis:
    """The trained module (`model`), the module the policy samples with (`generation_model`),
    the AdamW optimizer and the LR schedule. `policy_model` is the policy's loaded model."""

    def __init__(self, policy_model: torch.nn.Module, optim: OptimSettings, lora: LoraSettings | None = None,
                 fp32_master: bool = True) -> None:
        if lora is not None:
            # a policy loaded as a trainable adapter (training that starts from an adapter) keeps
            # that adapter: its own rank and targets, no second adapter stacked on it
            self.model = _fp32_adapters(policy_model) if is_peft(policy_model) else add_lora(policy_model, lora)
            self.generation_model = self.model
        elif fp32_master and any(p.dtype != torch.float32 for p in policy_model.parameters() if p.requires_grad):
            self.generation_model = policy_model.requires_grad_(False)
            self.model = copy.deepcopy(policy_model).float().requires_grad_(True)
        else:
            if any(p.dtype != torch.float32 for p in policy_model.parameters()):
                warnings.warn("training low-precision weights directly (fp32_master=false): most small "
                              "updates are rounded away", RuntimeWarning, stacklevel=2)
            self.model = policy_model
            self.generation_model = policy_model
        params = [p for _, p in _trainable(self.model)]
        if not params:
            raise UsageError("the model has no trainable parameters", "train with lora=true or a full model")
        self.optimizer = torch.optim.AdamW(params, lr=optim.lr, betas=optim.betas, weight_decay=optim.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer,
            lambda s: lr_factor(s, optim.total_steps, optim.warmup_steps, optim.schedule, optim.min_lr_ratio),
        )

    @property
    def separate_master(self) -> bool:
        """True when the trained fp32 weights are a copy of the weights the policy samples with."""
        return self.model is not self.generation_model

    @torch.no_grad()
    def sync_policy(self, source: torch.nn.Module | None = None) -> None:
        """Copy the master weights into the policy's sampling weights, in place (so captured
        CUDA graphs and engines that hold the tensors see the new values). `source`: the module
        holding the full master weights when `model` is sharded (FSDP's summoned module)."""
        if not self.separate_master:
            return
        master = dict((source or self.model).named_parameters())
        for name, target in self.generation_model.named_parameters():
            target.copy_(master[name])

    # -- checkpoints ---------------------------------------------------------------------------
    def save(self, out_dir: str | Path, step: int, tokenizer: Any, keep: int, base_spec: str | None,
             state_dict: dict[str, torch.Tensor] | None = None,
             optimizer_state: dict[str, Any] | None = None, keep_every: int | None = None) -> Path:
        """A checkpoint of `step`; a LoRA adapter records `base_spec` (the policy spec of the model
        it adapts) so that `hf:CHECKPOINT/model` loads anywhere that spec resolves. `state_dict`
        and `optimizer_state`: the gathered state of a sharded model (FSDP). `keep_every`: steps
        whose checkpoints outlive `keep` (see `save_checkpoint`)."""
        path = save_checkpoint(out_dir, step, self.model, tokenizer, self.optimizer, self.scheduler, keep,
                               state_dict=state_dict, optimizer_state=optimizer_state, keep_every=keep_every)
        if is_peft(self.model) and base_spec:
            write_base_spec(path / "model", base_spec)
            write_base_config(path / "model", self.model.get_base_model().config)
        return path

    def resume(self, out_dir: str | Path, with_optimizer: bool = True) -> int:
        """Restore the newest checkpoint of `out_dir` (weights, optimizer, schedule, RNG) and sync
        the policy's weights; returns the steps completed (0 when there is none).
        `with_optimizer=False`: the optimizer state is loaded after sharding (`load_optimizer_state`)."""
        checkpoint = latest_checkpoint(out_dir)
        if checkpoint is None:
            return 0
        step = load_checkpoint(checkpoint, self.model, self.optimizer, self.scheduler, with_optimizer=with_optimizer)
        self.sync_policy()
        return step

    def probe(self) -> UpdateProbe:
        """Snapshot the weights now, to measure the update made before `UpdateProbe.measure`."""
        return UpdateProbe(self)


class UpdateProbe:
    """What an update changed: taken before it (`chassis.probe()`), measured after it."""

    def __init__(self, chassis: Chassis) -> None:
        self.chassis = chassis
        self.before = {n: p.detach().clone() for n, p in _trainable(chassis.model)}
        self.policy_before = (
            {n: p.detach().clone() for n, p in chassis.generation_model.named_parameters()}
            if chassis.separate_master else None
        )

    @torch.no_grad()
    def measure(self) -> dict[str, float]:
        """update_norm ‖ΔW‖₂ over the trainable weights, update_rel_norm ‖ΔW‖/‖W‖, the fraction of
        trainable elements that changed, and the fraction of the policy's sampling weights that
        changed (the same as the trainable fraction when they are one module; for LoRA, the
        adapters are the trainable and the sampled weights that change)."""
        sq, base_sq, changed, total = 0.0, 0.0, 0, 0
        for name, p in _trainable(self.chassis.model):
            old = self.before[name]
            delta = p.detach().float() - old.float()
            sq += float(delta.pow(2).sum())
            base_sq += float(old.float().pow(2).sum())
            changed += int((p.detach() != old).sum())
            total += p.numel()
        record = {
            "update_norm": sq ** 0.5,
            "update_rel_norm": (sq / base_sq) ** 0.5 if base_sq > 0 else 0.0,
            "update_fraction_changed": changed / max(total, 1),
        }
        if self.policy_before is None:
            record["policy_fraction_changed"] = record["update_fraction_changed"]
        else:
            p_changed, p_total = 0, 0
            for name, p in self.chassis.generation_model.named_parameters():
                p_changed += int((p.detach() != self.policy_before[name]).sum())
                p_total += p.numel()
            record["policy_fraction_changed"] = p_changed / max(p_total, 1)
        return record


__all__ = ["Chassis", "adapter_base_spec", "LoraSettings", "OptimSettings", "UpdateProbe", "add_lora"]
