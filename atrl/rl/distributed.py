"""Data parallelism for the trainer, through `accelerate` (DDP, or FSDP for larger models).

`data_parallel()` returns `SingleProcess` unless the run was started by `accelerate launch`
with more than one process (`WORLD_SIZE` > 1); then `DataParallel`. Both offer the same few
operations, so the trainer reads the same either way and a single-process run does exactly
what it did before data parallelism existed.

How a step is split (ATRL-SPEC, "Loss"): rank r runs the step's tasks r, r+W, … (whole groups,
so advantages never cross ranks); the trainable-token count N is summed over ranks before the
loss; every rank runs the same number of micro-batches (padded with empty ones: DDP all-reduces
on backward, FSDP gathers on forward) and scales its loss by W because DDP averages gradients:
    mean_r( W · Σ_{t on r} ℓ_t / N ) = Σ_{all t} ℓ_t / N.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any, TypeVar

import torch

T = TypeVar("T")


def interleave(per_rank: Sequence[Sequence[T]], chunk: int = 1) -> list[T]:
    """Undo a round-robin split: rank r held chunks r, r+W, … (of `chunk` items each) of a list;
    returns that list. `interleave([[a, c], [b]]) == [a, b, c]`."""
    chunks = [[list(items[i : i + chunk]) for i in range(0, len(items), chunk)] for items in per_rank]
    out: list[T] = []
    for k in range(max((len(c) for c in chunks), default=0)):
        for rank_chunks in chunks:
            if k < len(rank_chunks):
                out.extend(rank_chunks[k])
    return out


class SingleProcess:
    """One process, one device: every collective is the identity."""

    rank = 0
    world_size = 1
    is_main = True
    is_fsdp = False

    def shard(self, items: Sequence[T]) -> list[T]:
        return list(items)

    def prepare(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> tuple[Any, Any]:
        return model, optimizer

    def sum(self, values: Sequence[float]) -> list[float]:
        return list(values)

    def max(self, values: Sequence[float]) -> list[float]:
        return list(values)

    def gather(self, items: list[T]) -> list[list[T]]:
        """Every rank's `items`, in rank order."""
        return [items]

    def no_sync(self, model: torch.nn.Module, skip: bool) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def full_params(self, model: torch.nn.Module) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def clip_grad_norm(self, model: torch.nn.Module, max_norm: float) -> float:
        params = [p for p in model.parameters() if p.grad is not None]
        return float(torch.nn.utils.clip_grad_norm_(params, max_norm))

    def state_dict(self, model: torch.nn.Module) -> dict[str, torch.Tensor] | None:
        """None: save the module's own weights."""
        return None

    def optimizer_state(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any] | None:
        """None: the checkpoint reads the optimizer's own state."""
        return None

    def main_first(self) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def wait(self) -> None:
        return None

    def close(self) -> None:
        """End of the run: release what the processes share (nothing for one process)."""
        return None


class DataParallel(SingleProcess):
    """W processes, one device each, set up by `accelerate launch` (DDP or FSDP per its config)."""

    def __init__(self) -> None:
        from accelerate import Accelerator
        from accelerate.utils import DistributedType

        # without cpu=True accelerate ignores torchrun's WORLD_SIZE on a machine with no GPU
        self.accelerator = Accelerator(cpu=not torch.cuda.is_available())
        self.rank = self.accelerator.process_index
        self.world_size = self.accelerator.num_processes
        self.is_main = self.accelerator.is_main_process
        self.is_fsdp = self.accelerator.distributed_type == DistributedType.FSDP
        self.device = self.accelerator.device

    def shard(self, items: Sequence[T]) -> list[T]:
        """This rank's share of a step's work: items r, r+W, …"""
        return list(items[self.rank :: self.world_size])

    def prepare(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> tuple[Any, Any]:
        """(wrapped model, optimizer): DDP/FSDP around `model`; the optimizer keeps its object
        (FSDP re-points its parameter groups at the shards), so the LR scheduler still drives it."""
        wrapped, _ = self.accelerator.prepare(model, optimizer)
        return wrapped, optimizer

    def _reduce(self, values: Sequence[float], op: torch.distributed.ReduceOp) -> list[float]:
        tensor = torch.tensor(list(values), dtype=torch.float64, device=self.device)
        torch.distributed.all_reduce(tensor, op=op)
        return tensor.tolist()

    def sum(self, values: Sequence[float]) -> list[float]:
        return self._reduce(values, torch.distributed.ReduceOp.SUM)

    def max(self, values: Sequence[float]) -> list[float]:
        return self._reduce(values, torch.distributed.ReduceOp.MAX)

    def gather(self, items: list[T]) -> list[list[T]]:
        out: list[Any] = [None] * self.world_size
        torch.distributed.all_gather_object(out, items)
        return out

    def no_sync(self, model: torch.nn.Module, skip: bool) -> contextlib.AbstractContextManager:
        """Skip the gradient all-reduce of this backward when `skip` (all micro-batches but the
        last: the last one's all-reduce carries the accumulated gradient)."""
        return self.accelerator.no_sync(model) if skip else contextlib.nullcontext()

    def full_params(self, model: torch.nn.Module) -> contextlib.AbstractContextManager:
        """Under FSDP, the unsharded weights in the inner module for this block (rollouts and
        no-grad scoring, which ranks run for different lengths); DDP needs nothing."""
        if not self.is_fsdp:
            return contextlib.nullcontext()
        from torch.distributed.fsdp import FullyShardedDataParallel

        return FullyShardedDataParallel.summon_full_params(model, writeback=False)

    def clip_grad_norm(self, model: torch.nn.Module, max_norm: float) -> float:
        return float(self.accelerator.clip_grad_norm_(model.parameters(), max_norm))

    def state_dict(self, model: torch.nn.Module) -> dict[str, torch.Tensor] | None:
        """The full weights (collective under FSDP: every rank must call it)."""
        return self.accelerator.get_state_dict(model) if self.is_fsdp else None

    def optimizer_state(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any] | None:
        """Under FSDP the whole by-name optimizer state, gathered from the shards (a collective:
        every rank must call it; rank 0 receives it). DDP replicas hold it whole already: None."""
        if not self.is_fsdp:
            return None
        from atrl.rl.checkpoint import optimizer_state_by_name

        return optimizer_state_by_name(model, optimizer)

    def main_first(self) -> contextlib.AbstractContextManager:
        return self.accelerator.main_process_first()

    def wait(self) -> None:
        self.accelerator.wait_for_everyone()

    def close(self) -> None:
        self.accelerator.wait_for_everyone()
        if torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()  # NCCL warns of leaked resources otherwise


def data_parallel() -> SingleProcess:
    """`DataParallel` when launched with more than one process, else `SingleProcess`."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        return DataParallel()
    return SingleProcess()

