"""Rows → padded tensors → model log-probs and accumulated PPO gradients, micro-batch by micro-batch.

The model is any causal LM whose forward takes `input_ids` and `attention_mask` and returns
`.logits` (transformers models, with or without a peft adapter). Rows are right-padded; the
log-prob of token p is read from the logits at p − 1, so position 0 (always prompt) has none.
Only the trainable tokens are projected onto the vocabulary (`atrl.rl.target_logits`): the loss
and its statistics run on those N tokens, packed row by row.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from atrl.rl.loss import LossStats, logprobs_from_logits, ppo_loss
from atrl.rl.rows import Row
from atrl.rl.target_logits import target_logits


@dataclass
class LossConfig:
    """Constants of the PPO objective (see `atrl.rl.loss.ppo_loss`)."""

    clip_low: float = 0.2
    clip_high: float = 0.28
    kl_beta: float = 0.0
    temperature: float = 1.0
    is_cap: float | None = None  # truncated importance sampling cap C (None: off)


@dataclass
class RowBatch:
    """Right-padded tensors of a micro-batch, all [B, T] (T = longest row)."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    loss_mask: torch.Tensor
    advantages: torch.Tensor
    old_logprobs: torch.Tensor
    ref_logprobs: torch.Tensor | None
    sampler_logprobs: torch.Tensor | None


def collate(rows: Sequence[Row], pad_id: int, device: torch.device | str = "cpu") -> RowBatch:
    width = max(len(r.token_ids) for r in rows)

    def pad(values: list, fill: float | int, dtype: torch.dtype) -> torch.Tensor:
        return torch.tensor([v + [fill] * (width - len(v)) for v in values], dtype=dtype, device=device)

    has_ref = all(r.ref_logprobs is not None for r in rows)
    has_sampler = all(r.sampler_logprobs is not None for r in rows)
    return RowBatch(
        input_ids=pad([r.token_ids for r in rows], pad_id, torch.long),
        attention_mask=pad([[1] * len(r.token_ids) for r in rows], 0, torch.long),
        loss_mask=pad([r.loss_mask for r in rows], 0, torch.float32),
        advantages=pad([r.advantages for r in rows], 0.0, torch.float32),
        old_logprobs=pad([r.old_logprobs for r in rows], 0.0, torch.float32),
        ref_logprobs=pad([r.ref_logprobs for r in rows], 0.0, torch.float32) if has_ref else None,  # type: ignore[misc]
        sampler_logprobs=pad([r.sampler_logprobs for r in rows], 0.0, torch.float32)  # type: ignore[misc]
        if has_sampler else None,
    )


def micro_batches(rows: Sequence[Row], size: int, max_tokens: int | None = None) -> Iterator[list[Row]]:
    """Consecutive micro-batches of at most `size` rows and, if given, `max_tokens` padded tokens."""
    batch: list[Row] = []
    for row in rows:
        width = max([len(row.token_ids)] + [len(r.token_ids) for r in batch])
        if batch and (
            len(batch) >= size or (max_tokens is not None and width * (len(batch) + 1) > max_tokens)
        ):
            yield batch
            batch = []
        batch.append(row)
    if batch:
        yield batch


def autocast_context(device: torch.device, enabled: bool) -> contextlib.AbstractContextManager:
    if enabled and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def forward_logprobs(
    model: torch.nn.Module, batch: RowBatch, temperature: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(log-probs [N] of the N trainable tokens, their logits [N, V], where they are: a [B, T−1]
    mask over tokens 1…T−1; `tensor[:, 1:][where]` packs any [B, T] tensor the same way)."""
    logits, targets = target_logits(model, batch.input_ids, batch.attention_mask, batch.loss_mask)
    return logprobs_from_logits(logits, targets, temperature), logits, batch.loss_mask[:, 1:].bool()


@torch.no_grad()
def row_logprobs(
    model: torch.nn.Module,
    rows: Sequence[Row],
    pad_id: int,
    temperature: float = 1.0,
    micro_batch_size: int = 8,
    max_tokens: int | None = None,
    device: torch.device | str = "cpu",
    autocast: bool = True,
) -> list[list[float]]:
    """Per-token log-probs [T_r] of every row under `model` at its trainable tokens (0.0 at the
    others: nothing reads them), in row order."""
    device = torch.device(device)
    out: list[list[float]] = []
    for batch_rows in micro_batches(rows, micro_batch_size, max_tokens):
        batch = collate(batch_rows, pad_id, device)
        with autocast_context(device, autocast):
            packed, _, where = forward_logprobs(model, batch, temperature)
        out += _unpacked(packed, where, batch_rows)
    return out


def accumulate_gradients(
    model: torch.nn.Module,
    rows: Sequence[Row],
    loss_config: LossConfig,
    pad_id: int,
    micro_batch_size: int = 8,
    max_tokens: int | None = None,
    total_tokens: int | None = None,
    device: torch.device | str = "cpu",
    autocast: bool = True,
    with_entropy: bool = True,
    loss_scale: float = 1.0,
    min_micro_batches: int = 0,
    no_sync: Callable[[bool], contextlib.AbstractContextManager] | None = None,
    old_from_current: bool = False,
) -> LossStats:
    """Backward the step's PPO loss into `.grad`, one micro-batch at a time; returns summed stats.

    The loss of every micro-batch is divided by the trainable-token count of all `rows`
    (`total_tokens`, default Σ row.num_trainable), so the accumulated gradient is that of the
    token mean over the step whatever the micro-batch split.

    Data parallel (`atrl.rl.distributed`): `total_tokens` is the count over all ranks,
    `loss_scale` (the world size) undoes DDP's gradient averaging in the backward only (the
    returned stats are unscaled), empty micro-batches pad the run to `min_micro_batches` so
    every rank does as many forward/backward passes, and `no_sync(skip)` gives the context of
    each backward (`skip` for all but the last).

    `old_from_current`: π_old is this very forward's log-probs, detached (ratio exactly 1), and
    they are written into each row's `old_logprobs`, at its trainable tokens, for the metrics:
    on-policy with one epoch, the separate scoring forward (`row_logprobs`) would compute the
    same numbers under the same weights.
    """
    device = torch.device(device)
    total = total_tokens if total_tokens is not None else sum(r.num_trainable for r in rows)
    stats = LossStats()
    if total == 0:
        return stats
    batches = list(micro_batches(rows, micro_batch_size, max_tokens))
    batches += [[empty_row(pad_id)]] * max(0, min_micro_batches - len(batches))
    for index, batch_rows in enumerate(batches):
        batch = collate(batch_rows, pad_id, device)
        skip_sync = index < len(batches) - 1
        with no_sync(skip_sync) if no_sync is not None else contextlib.nullcontext():
            batch_stats, current = _backward(model, batch, loss_config, total, loss_scale, autocast, with_entropy,
                                             old_from_current)
        if old_from_current:
            for row, logps in zip(batch_rows, _unpacked(current, batch.loss_mask[:, 1:].bool(), batch_rows),
                                  strict=True):
                row.old_logprobs = logps
        stats = stats + batch_stats
    return stats


def _unpacked(packed: torch.Tensor, where: torch.Tensor, rows: Sequence[Row]) -> list[list[float]]:
    """Packed per-token values [N] back into one list per row [T_r] (0.0 at position 0 and at
    tokens that are not trainable)."""
    full = torch.zeros(where.shape, dtype=torch.float32, device=where.device)
    full[where] = packed.float()
    full = full.cpu()
    return [[0.0] + full[i, : len(row.token_ids) - 1].tolist() for i, row in enumerate(rows)]


def micro_batch_count(rows: Sequence[Row], size: int, max_tokens: int | None = None) -> int:
    """How many micro-batches `accumulate_gradients` splits `rows` into."""
    return sum(1 for _ in micro_batches(rows, size, max_tokens))


def empty_row(pad_id: int) -> Row:
    """Two pad tokens, none trainable: a micro-batch that adds exactly zero to every gradient."""
    return Row([pad_id, pad_id], [0, 0], [0.0, 0.0], [0.0, 0.0], group_id=-1, trajectory_id=-1, segment_index=0)


def _backward(
    model: torch.nn.Module,
    batch: RowBatch,
    loss_config: LossConfig,
    total: int,
    loss_scale: float,
    autocast: bool,
    with_entropy: bool,
    old_from_current: bool,
) -> tuple[LossStats, torch.Tensor]:
    """Backward one micro-batch's loss; returns its stats and its log-probs [N] (detached)."""
    device = batch.input_ids.device
    with autocast_context(device, autocast):
        logp, logits, where = forward_logprobs(model, batch, loss_config.temperature)

    def packed(tensor: torch.Tensor | None) -> torch.Tensor | None:
        return tensor[:, 1:][where] if tensor is not None else None

    current = logp.detach()
    loss, batch_stats = ppo_loss(
        logp,
        current if old_from_current else packed(batch.old_logprobs),
        packed(batch.advantages),
        packed(batch.loss_mask),
        total,
        clip_low=loss_config.clip_low,
        clip_high=loss_config.clip_high,
        ref_logprobs=packed(batch.ref_logprobs),
        kl_beta=loss_config.kl_beta,
        logits=logits.detach() if with_entropy else None,
        temperature=loss_config.temperature,
        sampler_logprobs=packed(batch.sampler_logprobs),
        is_cap=loss_config.is_cap,
    )
    (loss * loss_scale if loss_scale != 1.0 else loss).backward()
    return batch_stats, current
