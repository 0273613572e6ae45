"""One PPO update of the trainer over fixed rows, run alone or under `accelerate launch`.

Usage: `python distributed_worker.py OUT` (one process: all rows) or
`accelerate launch ... distributed_worker.py OUT` (rank r: the groups r, r+W, …). Each rank
writes `OUT/rank{r}.pt`: the loss statistics, grad norm, gradients and weights after the update.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import torch

from atrl.rl.config import make_config
from atrl.rl.rows import Row
from atrl.rl.trainer import Trainer

# rows per group: with 2 ranks, rank 0 holds 6 rows (3 micro-batches of 2), rank 1 holds 2 (1)
ROWS_PER_GROUP = (3, 1, 3, 1)


def fixed_rows(vocab: int) -> list[Row]:
    """Rows of varied length, mask and advantage; group k is the step's k-th group."""
    rng = random.Random(7)
    rows = []
    for group, count in enumerate(ROWS_PER_GROUP):
        for i in range(count):
            length = rng.randint(5, 14)
            mask = [0, 0] + [rng.randint(0, 1) for _ in range(length - 2)]
            rows.append(
                Row(
                    token_ids=[rng.randrange(3, vocab) for _ in range(length)],
                    loss_mask=mask,
                    advantages=[rng.uniform(-1, 1) * m for m in mask],
                    old_logprobs=[0.0] * length,
                    group_id=group,
                    trajectory_id=group * 4 + i,
                    segment_index=0,
                )
            )
    return rows


def main(out: Path) -> None:
    torch.set_num_threads(1)
    config = make_config(
        dict(model="tiny-random:0", reward="synthetic", lr=2e-2, micro_batch_size=2, tasks_per_step=2,
             group_size=4, steps=1, bf16=False, out_dir=str(out / "run"))
    )
    trainer = Trainer(config, tasks=[])
    vocab = trainer.model.get_input_embeddings().weight.shape[0]
    rows = [r for r in fixed_rows(vocab) if r.group_id % trainer.dp.world_size == trainer.dp.rank]
    stats, grad_norm, _ = trainer.update(rows)
    torch.save(
        {
            "loss": stats.loss,
            "tokens": stats.tokens,
            "grad_norm": grad_norm,
            "grads": {n: p.grad.clone() for n, p in trainer.model.named_parameters() if p.grad is not None},
            "weights": {n: p.detach().clone() for n, p in trainer.model.named_parameters()},
        },
        out / f"rank{trainer.dp.rank}.pt",
    )
    if torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
    # As tests/rl/fsdp_worker.py: everything written, leave without the interpreter's teardown,
    # where a gloo thread aborts the process now and then ("terminate called without an active
    # exception"), which would fail the launch.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
