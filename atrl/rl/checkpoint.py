"""Checkpoints: HF-native weights plus the trainer state needed for an exact resume.

Layout of `OUT/checkpoints/step_000010/`:
    model/               `save_pretrained` of the model (full fine-tune) or of the LoRA adapter,
                         with the tokenizer beside it — loadable by transformers / peft directly
    trainer_state.pt     step, optimizer, LR scheduler and every RNG state
The optimizer state is keyed by parameter name and held whole (`optimizer_state_by_name`), not
by position in one process's parameter list: a run checkpointed under FSDP (sharded state) or DDP
resumes under either, or in one process. Checkpoints written before that hold positional state
under "optimizer" and still load where the parameter list is the same.
`OUT/checkpoints/latest` names the newest complete checkpoint; a checkpoint is written under a
temporary name and renamed, so a run killed mid-save never leaves a half checkpoint as latest.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch


def is_peft(model: torch.nn.Module) -> bool:
    return hasattr(model, "peft_config")


def rng_state() -> dict[str, Any]:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def latest_checkpoint(out_dir: str | Path) -> Path | None:
    """The newest complete checkpoint of a run directory, or None."""
    marker = Path(out_dir) / "checkpoints" / "latest"
    if not marker.exists():
        return None
    path = marker.parent / marker.read_text().strip()
    return path if (path / "trainer_state.pt").exists() else None


def save_checkpoint(
    out_dir: str | Path,
    step: int,
    model: torch.nn.Module,
    tokenizer: Any,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    keep: int = 2,
    state_dict: dict[str, torch.Tensor] | None = None,
    optimizer_state: dict[str, Any] | None = None,
    keep_every: int | None = None,
) -> Path:
    """Write the checkpoint of `step` (steps completed) and keep the newest `keep`, and every
    checkpoint whose step is a multiple of `keep_every` (milestones, e.g. for later evaluation).
    `state_dict` and `optimizer_state`: the weights and the by-name optimizer state to save when
    the module holds only a shard of them (FSDP: gathered on every rank, saved by one)."""
    root = Path(out_dir) / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    name = f"step_{step:06d}"
    tmp = root / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    if state_dict is None:
        model.save_pretrained(tmp / "model")
    else:
        model.save_pretrained(tmp / "model", state_dict=state_dict)
    if tokenizer is not None and hasattr(tokenizer, "save_pretrained"):
        tokenizer.save_pretrained(tmp / "model")
    torch.save(
        {
            "step": step,
            "optimizer_by_name": optimizer_state if optimizer_state is not None
            else optimizer_state_by_name(model, optimizer),
            "scheduler": scheduler.state_dict(),
            "rng": rng_state(),
        },
        tmp / "trainer_state.pt",
    )
    final = root / name
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    (root / "latest.tmp").write_text(name)
    (root / "latest.tmp").replace(root / "latest")
    for old in sorted(p for p in root.glob("step_*") if p.is_dir())[:-keep]:
        if keep_every is None or int(old.name.removeprefix("step_")) % keep_every:
            shutil.rmtree(old, ignore_errors=True)
    return final


def _load_weights(model: torch.nn.Module, directory: Path) -> None:
    from safetensors.torch import load_file

    files = sorted(directory.glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"no .safetensors weights in {directory}")
    state: dict[str, torch.Tensor] = {}
    for f in files:
        state.update(load_file(str(f)))
    if is_peft(model):
        from peft import set_peft_model_state_dict

        set_peft_model_state_dict(model, state)
        return
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = set(getattr(model, "_tied_weights_keys", None) or [])
    missing = [k for k in missing if k not in tied and "lm_head" not in k]
    if missing or unexpected:
        raise RuntimeError(
            f"checkpoint {directory} does not match the model: missing {missing}, unexpected {unexpected}"
        )


def optimizer_state_by_name(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """The optimizer's whole state keyed by parameter name, on the CPU (torch.distributed.checkpoint).
    `model` is the module the optimizer steps: under FSDP the wrapped one, and the call is then a
    collective that every rank must make (rank 0 receives the state, the others an empty dict)."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

    return get_optimizer_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))


def _trainer_state(path: Path) -> dict[str, Any]:
    return torch.load(path / "trainer_state.pt", weights_only=False)


def load_optimizer_state(path: str | Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Restore a checkpoint's optimizer state into `optimizer`, which steps `model` (under FSDP the
    wrapped module: each rank then keeps its shard of the whole state it reads)."""
    _restore_optimizer(_trainer_state(Path(path)), model, optimizer)


def _restore_optimizer(state: dict[str, Any], model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    if "optimizer_by_name" not in state:
        optimizer.load_state_dict(state["optimizer"])  # a checkpoint from before by-name state
        return
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

    set_optimizer_state_dict(model, optimizer, state["optimizer_by_name"], options=StateDictOptions(full_state_dict=True))


def load_checkpoint(
    path: str | Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler: Any,
    with_optimizer: bool = True,
) -> int:
    """Restore weights, optimizer, scheduler and RNG states; returns the steps completed.
    `with_optimizer=False` leaves the optimizer to `load_optimizer_state`, for a module that is
    sharded only after its weights are loaded (FSDP)."""
    path = Path(path)
    _load_weights(model, path / "model")
    state = _trainer_state(path)
    if with_optimizer:
        _restore_optimizer(state, model, optimizer)
    scheduler.load_state_dict(state["scheduler"])
    set_rng_state(state["rng"])
    return int(state["step"])
