"""Two LoRA adapters, the second trained over the first merged into its base, as one adapter.

`atrl sft` started from an adapter used to merge it and stack a new adapter on the merged
weights, while recording the first adapter's base beside the new one, so a checkpoint's adapter
alone lost the first stage (fixed: it now continues the adapter). This writes such a pair as the
one adapter it stands for: rank r1 + r2 (peft's `cat` combination: A stacked, B side by side,
each B scaled by its own alpha/r relative to the first's, which the result keeps), with the first
adapter's other files (its base spec, base config, tokenizer). Its merged weights are checked
against merging the two in turn before anything is written.

    python scripts/compose_adapters.py FIRST SECOND OUT
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import torch


def merged_weights(spec_dir: Path, then: Path | None = None) -> dict[str, torch.Tensor]:
    """The fp32 weights of `spec_dir` (an adapter, merged), with `then` merged over them."""
    from peft import PeftModel

    from atrl.policy.hf import HFPolicy

    model = HFPolicy(spec_dir, device="cpu", dtype=torch.float32, engine=None).model
    if then is not None:
        model = PeftModel.from_pretrained(model, str(then)).merge_and_unload()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def compose(first: Path, second: Path, out: Path, atol: float = 1e-4) -> float:
    """Write the composed adapter to `out`; returns the largest weight difference to merging
    `first` then `second` (refused above `atol`)."""
    from atrl.policy.hf import HFPolicy

    policy = HFPolicy(first, device="cpu", dtype=torch.float32, engine=None, adapter_trainable=True)
    model = policy.model
    model.load_adapter(str(second), adapter_name="second")
    model.add_weighted_adapter(["default", "second"], [1.0, 1.0], "composed", combination_type="cat")
    # `cat` bakes each adapter's alpha/r into its B and gives the result alpha = r (scaling 1); keep
    # the first adapter's scaling instead, so that training which continues it sees the same
    # parametrization (the same effective step size on B) as the adapters it came from
    config = model.peft_config["default"]
    scaling = config.lora_alpha / config.r
    composed = model.peft_config["composed"]
    alpha = scaling * composed.r
    composed.lora_alpha = int(alpha) if float(alpha).is_integer() else alpha
    with torch.no_grad():
        for name, param in model.named_parameters():
            if ".lora_B.composed." in name:
                param.div_(scaling)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp, selected_adapters=["composed"])
        staged = Path(tmp) / "composed"
        for f in first.iterdir():  # all but the adapter itself, which peft just wrote
            if f.is_file() and not (staged / f.name).exists():
                shutil.copy(f, staged / f.name)
        expected = merged_weights(first, second)
        got = merged_weights(staged)
        worst = max(float((expected[k] - got[k]).abs().max()) for k in expected)
        if worst > atol:
            raise SystemExit(f"the composed adapter differs from {first} then {second} by {worst:.2e} (> {atol})")
        out.mkdir(parents=True, exist_ok=True)
        for f in staged.iterdir():
            shutil.copy(f, out / f.name)
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path, help="the first stage's adapter")
    parser.add_argument("second", type=Path, help="the adapter trained over the first, merged")
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    for path in (args.first, args.second):
        if not (path / "adapter_config.json").is_file():
            print(f"error: {path} is not a LoRA adapter directory (no adapter_config.json)", file=sys.stderr)
            return 2
    worst = compose(args.first, args.second, args.out)
    print(f"{args.out}: one adapter for {args.first} then {args.second} (largest weight difference {worst:.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
