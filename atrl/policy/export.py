"""A LoRA adapter merged into its base model, written as a plain transformers directory."""

from __future__ import annotations

from pathlib import Path

import torch

from atrl.errors import UsageError

DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32}


def export_merged(adapter: str | Path, out: str | Path, dtype: str = "bfloat16") -> Path:
    """Load `adapter` over its base in fp32 on the CPU, merge, and save `out` in `dtype`."""
    from atrl.policy.adapters import is_adapter_dir
    from atrl.policy.hf import HFPolicy

    adapter, out = Path(adapter), Path(out)
    if dtype not in DTYPES:
        raise UsageError(f"--dtype {dtype!r} is not one of {', '.join(DTYPES)}", "pass --dtype bfloat16 or float32")
    if not is_adapter_dir(adapter):
        raise UsageError(f"{adapter} is not a LoRA adapter directory (no adapter_config.json)",
                         "pass a checkpoint's model directory of a run trained with lora: true")
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"--out {out} exists and is not empty", "choose a new directory or remove it")
    policy = HFPolicy(adapter, device="cpu", dtype=torch.float32, engine=None)
    model = policy.model.to(DTYPES[dtype])
    model.save_pretrained(out)
    policy.tokenizer.save_pretrained(out)
    return out
