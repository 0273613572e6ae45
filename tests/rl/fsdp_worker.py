"""A few AdamW steps of a tiny Llama sharded with FSDP over 2 CPU processes (gloo), checkpointed
and resumed through `atrl.rl.checkpoint`, started by torchrun from tests/rl/test_distributed.py.

FSDP needs an accelerator in torch's first API and in `accelerate`, so the trainer's FSDP path
cannot run on a CPU; torch's second FSDP API (`fully_shard`) can. Both shard parameters and
optimizer state the same way as far as the checkpoint is concerned: this worker checks that the
by-name optimizer state, gathered from the shards and loaded back into them, resumes exactly.

Usage: `torchrun --nproc_per_node 2 fsdp_worker.py MODE OUT` with MODE
- straight: 4 steps, with a checkpoint in OUT after step 2 (rank 0 writes it; taking it only
  reads the state);
- resume: the checkpoint's weights into a fresh model, sharded, its optimizer state into the new
  optimizer, then steps 3 and 4.
Each run writes `OUT/MODE.pt` (rank 0): the steps' mean losses and the full weights at the end.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist

from atrl.rl.checkpoint import (
    latest_checkpoint,
    load_checkpoint,
    load_optimizer_state,
    optimizer_state_by_name,
    save_checkpoint,
)

STEPS = 4
CHECKPOINT_STEP = 2


def tiny_llama() -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, tie_word_embeddings=True)
    return LlamaForCausalLM(config)


def shard(model: torch.nn.Module) -> None:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)


def optimizer_for(model: torch.nn.Module) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0 / (1 + s))


def batch(step: int) -> torch.Tensor:
    """This rank's tokens of `step`: the same on every run."""
    generator = torch.Generator().manual_seed(1000 * step + dist.get_rank())
    return torch.randint(0, 96, (2, 12), generator=generator)


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler, step: int) -> float:
    tokens = batch(step)
    loss = model(input_ids=tokens, labels=tokens).loss
    loss.backward()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    mean = loss.detach().clone()
    dist.all_reduce(mean)
    return float(mean) / dist.get_world_size()


def full_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    return get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))


def main(mode: str, out: Path) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    model, first = tiny_llama(), 1
    if mode == "resume":
        checkpoint = latest_checkpoint(out)
        # as the trainer does: weights into the unsharded model, the optimizer after sharding
        plain_optimizer, plain_scheduler = optimizer_for(model)
        first = load_checkpoint(checkpoint, model, plain_optimizer, plain_scheduler, with_optimizer=False) + 1
    shard(model)
    optimizer, scheduler = optimizer_for(model)
    if mode == "resume":
        scheduler.load_state_dict(plain_scheduler.state_dict())
        load_optimizer_state(checkpoint, model, optimizer)
    losses = []
    for step in range(first, STEPS + 1):
        losses.append(train_step(model, optimizer, scheduler, step))
        if mode == "straight" and step == CHECKPOINT_STEP:
            weights, state = full_weights(model), optimizer_state_by_name(model, optimizer)  # collectives
            if dist.get_rank() == 0:
                save_checkpoint(out, step, model, None, optimizer, scheduler, state_dict=weights, optimizer_state=state)
    weights = full_weights(model)
    if dist.get_rank() == 0:
        torch.save({"losses": losses, "weights": weights}, out / f"{mode}.pt")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
    # With everything written, leave without the interpreter's teardown: there a gloo thread of
    # torch's aborts the process now and then ("terminate called without an active exception",
    # no Python frame; about 1 run in 20 on a loaded 2-core machine), which would fail the launch.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
