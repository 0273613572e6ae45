"""A control for "is it the step's size or its direction?": a LoRA adapter that moves from START as
far as STEP does, tensor by tensor, but in a random Gaussian direction.

For every adapter tensor k: START_k + noise_k · ‖STEP_k − START_k‖ / ‖noise_k‖, saved in the
tensors' own dtype into a copy of STEP's adapter directory (config, tokenizer, base pointer).
Score it beside STEP with `benchmarks/solution_likelihood.py` (docs/experiments/rl-decline.md).

    python benchmarks/random_direction_adapter.py --start atrl/models/smollm2_135m_triton \
        --step runs/rl22/step_000022/model --seed 0 --out runs/randdir/rand0
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

ADAPTER = "adapter_model.safetensors"


def random_direction(start: dict[str, torch.Tensor], step: dict[str, torch.Tensor],
                     seed: int) -> dict[str, torch.Tensor]:
    """START moved by a random direction with, per tensor, the norm of STEP − START."""
    if set(start) != set(step):
        raise SystemExit("error: the two adapters hold different tensors; pass a step of the same adapter")
    generator = torch.Generator().manual_seed(seed)
    moved = {}
    for name, value in start.items():
        size = (step[name].float() - value.float()).norm()
        noise = torch.randn(value.shape, generator=generator)
        moved[name] = (value.float() + noise * (size / noise.norm())).to(value.dtype)
    return moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=Path, required=True, help="adapter directory the step started from")
    parser.add_argument("--step", type=Path, required=True, help="adapter directory after the steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    for folder in (args.start, args.step):
        if not (folder / ADAPTER).is_file():
            raise SystemExit(f"error: {folder} holds no {ADAPTER}; pass a LoRA adapter directory")
    moved = random_direction(load_file(str(args.start / ADAPTER)), load_file(str(args.step / ADAPTER)), args.seed)
    if args.out.exists():
        shutil.rmtree(args.out)
    shutil.copytree(args.step, args.out)
    save_file(moved, str(args.out / ADAPTER), metadata={"format": "pt"})
    print(f"{args.out}: {len(moved)} tensors")


if __name__ == "__main__":
    main()
