"""The output head projects the target tokens only, and the numbers equal the full projection's."""

from __future__ import annotations

import pytest
import torch
from rl_builders import tiny_model

from atrl.rl.loss import logprobs_from_logits
from atrl.rl.rows import Row
from atrl.rl.sft import target_nll_sum
from atrl.rl.target_logits import target_logits
from atrl.rl.update import LossConfig, accumulate_gradients, collate, row_logprobs


def _rows() -> list[Row]:
    """Rows whose trainable spans sit at different offsets, as responses after prompts of
    different lengths do; one row has two spans (a response, then a summary)."""
    specs = [(3, 5, 30), (11, 4, 25), (6, 2, 40), (20, 6, 33)]
    rows = []
    for i, (start, length, width) in enumerate(specs):
        mask = [int(start <= p < start + length or (i == 2 and 30 <= p < 34)) for p in range(width)]
        ids = [3 + (7 * p + 5 * i) % 60 for p in range(width)]
        adv = [0.5 - 0.3 * i] * width
        rows.append(Row(ids, mask, adv, [0.0] * width, group_id=0, trajectory_id=i, segment_index=0))
    return rows


def _head_rows(model: torch.nn.Module) -> list[int]:
    """Rows of hidden states the output head projects at each forward (recorded by a hook)."""
    seen: list[int] = []
    model.get_output_embeddings().register_forward_hook(
        lambda _m, _args, out: seen.append(out.reshape(-1, out.shape[-1]).shape[0])
    )
    return seen


def _full_logprobs(model: torch.nn.Module, rows: list[Row]) -> torch.Tensor:
    batch = collate(rows, pad_id=0)
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
    return logprobs_from_logits(logits, batch.input_ids[:, 1:])


def test_the_head_projects_only_the_trainable_tokens_of_a_micro_batch():
    model, rows = tiny_model(seed=1), _rows()
    seen = _head_rows(model)
    accumulate_gradients(model, rows, LossConfig(), pad_id=0, micro_batch_size=8, autocast=False)
    trainable = sum(sum(r.loss_mask[1:]) for r in rows)
    assert seen == [trainable]  # not 4 rows × 40 positions
    assert trainable < len(rows) * max(len(r.token_ids) for r in rows) / 4


def test_log_probs_at_trainable_tokens_equal_the_full_projection():
    model, rows = tiny_model(seed=2), _rows()
    packed = row_logprobs(model, rows, pad_id=0, micro_batch_size=3, autocast=False)
    with torch.no_grad():
        full = _full_logprobs(model, rows)
    for i, row in enumerate(rows):
        for p, trainable in enumerate(row.loss_mask):
            if p and trainable:
                assert abs(packed[i][p] - float(full[i, p - 1])) < 1e-5


def test_a_model_whose_logits_bypass_its_head_gets_the_same_logits_from_the_full_projection():
    class Bypass(torch.nn.Module):  # no get_output_embeddings: its logits come from elsewhere
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, **kwargs):
            return self.inner(**kwargs)

    model, rows = tiny_model(seed=3), _rows()
    batch = collate(rows, pad_id=0)
    with torch.no_grad():
        direct = target_logits(model, batch.input_ids, batch.attention_mask, batch.loss_mask)
        bypassed = target_logits(Bypass(model), batch.input_ids, batch.attention_mask, batch.loss_mask)
    assert direct[0].shape == (sum(sum(r.loss_mask[1:]) for r in rows), 64)
    assert torch.allclose(direct[0], bypassed[0], atol=1e-6)
    assert torch.equal(direct[1], bypassed[1])


def test_sft_loss_projects_only_targets_and_equals_the_full_cross_entropy():
    model, rows = tiny_model(seed=4), _rows()
    batch = collate(rows, pad_id=0)
    sft_batch = {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask, "loss_mask": batch.loss_mask}
    seen = _head_rows(model)
    with torch.no_grad():
        ours = float(target_nll_sum(model, sft_batch, autocast=False))
        full = -float((_full_logprobs(model, rows) * batch.loss_mask[:, 1:]).sum())
    assert seen[0] == int(batch.loss_mask[:, 1:].sum())
    assert abs(ours - full) < 1e-4


def test_old_log_probs_from_the_updates_own_forward_give_the_scored_paths_gradient():
    model, rows = tiny_model(seed=5), _rows()
    for row, lps in zip(rows, row_logprobs(model, rows, pad_id=0, autocast=False), strict=True):
        row.old_logprobs = lps  # the scoring forward, then the update's
    accumulate_gradients(model, rows, LossConfig(), pad_id=0, micro_batch_size=3, autocast=False)
    scored = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    fresh = _rows()  # old log-probs never scored: the update's forward gives them
    accumulate_gradients(model, fresh, LossConfig(), pad_id=0, micro_batch_size=3, autocast=False,
                         old_from_current=True)
    for a, b in zip(scored, [p.grad for p in model.parameters()], strict=True):
        assert torch.allclose(a, b, atol=1e-7, rtol=1e-5)
    for old, new in zip(rows, fresh, strict=True):
        assert new.old_logprobs == pytest.approx(old.old_logprobs, abs=1e-6)
