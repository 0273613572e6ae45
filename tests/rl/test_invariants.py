"""The twelve invariants of ATRL-SPEC, one test each (numbered as in the spec).

Each test fails when its property is broken. Invariant 3 also keeps a broken variant of the loss
(per-row mean, `per_row_mean_loss`) and shows that it violates the property.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import pytest
import torch
from rl_builders import TurnSpec, make_trajectory, tiny_model

from atrl.rl.advantages import AdvantageOptions, estimator_names, get_estimator
from atrl.rl.loss import logprobs_from_logits, ppo_loss
from atrl.rl.rewards import CREDITS
from atrl.rl.rows import Row, build_rows, group_advantages, trajectory_returns
from atrl.rl.update import LossConfig, accumulate_gradients, collate, row_logprobs

EPS = 1e-6


def _trainable_advantages(row: Row) -> list[float]:
    return [a for a, m in zip(row.advantages, row.loss_mask, strict=True) if m]


def _perturbed(rows: list[Row], model: torch.nn.Module, seed: int, scale: float = 0.3) -> list[Row]:
    """Give rows old log-probs near the model's own, so ratios differ from 1 and some clip."""
    gen = random.Random(seed)
    current = row_logprobs(model, rows, pad_id=0, autocast=False)
    for row, lps in zip(rows, current, strict=True):
        row.old_logprobs = [lp + gen.uniform(-scale, scale) for lp in lps]
    return rows


def _grads(model: torch.nn.Module) -> list[torch.Tensor]:
    return [
        p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p) for p in model.parameters()
    ]


# 1 ────────────────────────────────────────────────────────────────────────────────────────────
def test_invariant_01_single_segment_grpo_is_vanilla_grpo_and_drgrpo_is_dr_grpo():
    scores = [0.0, 1.0, 0.1, 2.5]
    group = [make_trajectory([[TurnSpec(s, response_len=2 + i)]], sample=i) for i, s in enumerate(scores)]
    outcomes = torch.tensor(scores)
    vanilla = {
        "grpo": (outcomes - outcomes.mean()) / (outcomes.std() + EPS),  # DeepSeekMath / verl
        "drgrpo": outcomes - outcomes.mean(),  # Dr. GRPO
    }
    gen = torch.Generator().manual_seed(0)
    for name, expected in vanilla.items():
        rows = build_rows([group], name, options=AdvantageOptions(eps=EPS))
        assert [r.trajectory_id for r in rows] == [0, 1, 2, 3]
        for row, a in zip(rows, expected.tolist(), strict=True):
            assert _trainable_advantages(row) == pytest.approx([a] * row.num_trainable)
        # The loss: token-level clipped objective of vanilla GRPO over each response o_i,
        # normalised by Σ|o_i| (Dr. GRPO: by a constant — here the step's token count).
        batch = collate(rows, pad_id=0)
        new = batch.old_logprobs + 0.4 * torch.randn(batch.old_logprobs.shape, generator=gen)
        total = sum(r.num_trainable for r in rows)
        loss, _ = ppo_loss(new, batch.old_logprobs, batch.advantages, batch.loss_mask, total)
        reference = 0.0
        for i, row in enumerate(rows):
            for t, m in enumerate(row.loss_mask):
                if m:
                    ratio = math.exp(float(new[i, t]) - row.old_logprobs[t])
                    a = expected[i].item()
                    reference -= min(ratio * a, min(max(ratio, 0.8), 1.28) * a)
        assert float(loss) == pytest.approx(reference / total, rel=1e-5)


# 2 ────────────────────────────────────────────────────────────────────────────────────────────
def test_invariant_02_gamma_one_first_return_is_outcome_for_any_split():
    gen = random.Random(2)
    for _ in range(50):
        scores = [round(gen.uniform(0, 3), 2) for _ in range(gen.randint(1, 6))]
        cuts = (
            sorted(gen.sample(range(1, len(scores)), gen.randint(0, len(scores) - 1)))
            if len(scores) > 1
            else []
        )
        bounds = [0, *cuts, len(scores)]
        split = [scores[a:b] for a, b in itertools.pairwise(bounds)]
        traj = make_trajectory(split)
        for credit in CREDITS:
            outcome, returns = trajectory_returns(traj, credit, gamma=1.0)
            assert outcome == pytest.approx(max(scores))
            assert returns[0] == pytest.approx(outcome), (split, credit)


# 3 ────────────────────────────────────────────────────────────────────────────────────────────
def per_row_mean_loss(logprobs, old_logprobs, advantages, mask, total_tokens, **kw):
    """BROKEN on purpose: the mean over each row's tokens, then over rows (sample-level GRPO
    aggregation). A trajectory split into more rows weighs more; kept to show invariant 3 bites."""
    ratio = torch.exp((logprobs - old_logprobs) * mask)
    per_token = -torch.minimum(ratio * advantages, torch.clamp(ratio, 0.8, 1.28) * advantages) * mask
    return (per_token.sum(1) / mask.sum(1).clamp(min=1)).mean(), None


LOSS_UNDER_TEST = ppo_loss


def _stream_loss_and_grad(loss_fn, stream_lp, old, adv, mask, pieces):
    """Loss of the token stream cut into rows of the given lengths, and d loss / d stream_lp."""
    width = max(pieces)
    starts = [sum(pieces[:i]) for i in range(len(pieces))]

    def rows_of(t: torch.Tensor) -> torch.Tensor:
        return torch.stack(
            [torch.cat([t[s : s + n], t.new_zeros(width - n)]) for s, n in zip(starts, pieces, strict=True)]
        )

    lp = stream_lp.detach().clone().requires_grad_(True)
    loss, _ = loss_fn(rows_of(lp), rows_of(old), rows_of(adv), rows_of(mask), total_tokens=int(mask.sum()))
    loss.backward()
    return float(loss.detach()), lp.grad.clone()


def test_invariant_03_splitting_rows_keeps_token_mean_loss_and_grad():
    gen = torch.Generator().manual_seed(3)
    n = 24
    old = -torch.rand(n, generator=gen) * 3
    stream_lp = old + 0.5 * torch.randn(n, generator=gen)
    adv = torch.randn(n, generator=gen)
    mask = (torch.rand(n, generator=gen) > 0.3).float()
    whole = _stream_loss_and_grad(LOSS_UNDER_TEST, stream_lp, old, adv, mask, [n])
    for pieces in ([12, 12], [3, 9, 12], [2, 2, 5, 15]):
        split = _stream_loss_and_grad(LOSS_UNDER_TEST, stream_lp, old, adv, mask, pieces)
        assert split[0] == pytest.approx(whole[0], abs=1e-6), f"loss changed when split into {pieces}"
        assert torch.allclose(split[1], whole[1], atol=1e-7), f"gradient changed when split into {pieces}"
    # The per-row-mean variant breaks the invariant: this is what the test above guards against.
    broken_whole = _stream_loss_and_grad(per_row_mean_loss, stream_lp, old, adv, mask, [n])
    broken_split = _stream_loss_and_grad(per_row_mean_loss, stream_lp, old, adv, mask, [3, 9, 12])
    assert broken_split[0] != pytest.approx(broken_whole[0], abs=1e-6)
    assert not torch.allclose(broken_split[1], broken_whole[1], atol=1e-7)


# 4 ────────────────────────────────────────────────────────────────────────────────────────────
def test_invariant_04_gradient_is_exactly_zero_at_masked_positions():
    gen = torch.Generator().manual_seed(4)
    b, t, v = 3, 10, 7
    logits = torch.randn(b, t, v, generator=gen, requires_grad=True)
    targets = torch.randint(0, v, (b, t), generator=gen)
    mask = (torch.rand(b, t, generator=gen) > 0.5).float()
    mask[0, 0], mask[0, 1] = 1.0, 0.0
    lp = logprobs_from_logits(logits, targets)
    # Finite, realistic old / reference / sampler log-probs everywhere (near the model's own), and
    # advantages everywhere: only the mask can keep masked positions out of the gradient.
    near = lp.detach()
    old = near + 0.2 * torch.randn(b, t, generator=gen)
    ref = near + 0.2 * torch.randn(b, t, generator=gen)
    sampler = near + 0.2 * torch.randn(b, t, generator=gen)
    adv = torch.randn(b, t, generator=gen)
    loss, _ = ppo_loss(lp, old, adv, mask, total_tokens=int(mask.sum()), ref_logprobs=ref, kl_beta=0.1,
                       sampler_logprobs=sampler, is_cap=2.0)
    loss.backward()
    assert torch.isfinite(loss)
    masked = ~mask.bool()
    assert torch.count_nonzero(logits.grad[masked]) == 0
    assert torch.all(logits.grad[mask.bool()].abs().sum(-1) > 0)


# 5 ────────────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize("scale", ["none", "std"])
def test_invariant_05_leave_one_out_advantages_sum_to_zero_at_each_index(scale):
    gen = random.Random(5)
    for n in (2, 3, 8):
        returns = [[gen.uniform(0, 2) for _ in range(4)] for _ in range(n)]
        adv = get_estimator("atrl")([r[0] for r in returns], returns, AdvantageOptions(atrl_scale=scale))
        for k in range(4):
            assert sum(a[k] for a in adv) == pytest.approx(0.0, abs=1e-9)
        assert any(abs(a[0]) > 1e-3 for a in adv)


# 6 ────────────────────────────────────────────────────────────────────────────────────────────
def test_invariant_06_identical_trajectories_zero_and_equal_outcomes_at_different_segments_not():
    same = [make_trajectory([[0.1, 0.5], [1.0]], sample=i) for i in range(4)]
    for name, credit in itertools.product(estimator_names(), CREDITS):
        adv = group_advantages(same, name, credit, 0.9, AdvantageOptions())
        assert all(a == 0.0 for units in adv for a in units), (name, credit)
        assert build_rows([same], name, credit, 0.9) == []  # a group without signal is dropped
    early = make_trajectory([[1.0], [0.5]])  # reaches 1.0 in segment 1
    late = make_trajectory([[0.0], [1.0]], sample=1)  # reaches 1.0 in segment 2
    atrl = group_advantages([early, late], "atrl", "segment", 0.9, AdvantageOptions())
    assert atrl[0][0] > 0 > atrl[1][0]  # reaching it sooner is better under γ < 1
    grpo = group_advantages([early, late], "grpo", "segment", 0.9, AdvantageOptions())
    assert all(a == 0.0 for units in grpo for a in units)


# 7 ────────────────────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize("credit", ["segment", "turn"])
def test_invariant_07_summary_tokens_carry_next_segment_advantage_last_none(credit):
    gamma = 0.8
    a = make_trajectory([[0.1, 0.2], [0.5], [1.0]], last_summary=True)
    b = make_trajectory([[0.3], [0.3], [0.4]], last_summary=True, sample=1)
    unit_adv = group_advantages([a, b], "atrl", credit, gamma, AdvantageOptions())
    rows = [r for r in build_rows([[a, b]], "atrl", credit, gamma) if r.trajectory_id == 0]
    first_unit = {0: 0, 1: 1, 2: 2} if credit == "segment" else {0: 0, 1: 2, 2: 3}
    for k, (row, seg) in enumerate(zip(rows, a.segments, strict=True)):
        written = seg.spans[-1]
        carried = [s for s in seg.spans if s.type == "summary" and s is not written]
        assert written.type == "summary"
        for p in range(written.start, written.end):
            if k + 1 < len(a.segments):
                assert row.loss_mask[p] == 1
                assert row.advantages[p] == pytest.approx(gamma * unit_adv[0][first_unit[k + 1]])
            else:
                assert row.loss_mask[p] == 0 and row.advantages[p] == 0.0
        for span in carried:  # the summary carried into this segment is context, not a sample
            assert all(row.loss_mask[p] == 0 for p in range(span.start, span.end))
    assert any(unit_adv[0][u] != 0 for u in first_unit.values())
    # A summary that the structured fallback replaced was not written by the policy: masked.
    c = make_trajectory([[0.1], [0.5]], fallback={0})
    (row_c,) = [
        r
        for r in build_rows([[c, b]], "atrl", credit, gamma)
        if r.trajectory_id == 0 and r.segment_index == 0
    ]
    assert row_c.summary_fallback
    span = c.segments[0].spans[-1]
    assert all(row_c.loss_mask[p] == 0 for p in range(span.start, span.end))


@pytest.mark.parametrize("credit", ["segment", "turn"])
def test_invariant_07_each_segment_response_tokens_carry_their_own_unit_advantage(credit):
    """The property that separates segment credit from trajectory credit: segment k's response
    tokens get A_{i,k} (turn credit: their turn's), not another segment's."""
    group = [
        make_trajectory([[0.1], [0.6], [0.7]], sample=0),
        make_trajectory([[0.5], [0.5], [0.9]], sample=1),
        make_trajectory([[0.0], [0.2], [1.0]], sample=2),
    ]
    unit_adv = group_advantages(group, "atrl", credit, 1.0, AdvantageOptions())
    rows = build_rows([group], "atrl", credit, 1.0)
    checked = set()
    for row in rows:
        traj = group[row.trajectory_id]
        segment = traj.segments[row.segment_index]
        for turn in traj.turns:
            if turn.segment != row.segment_index:
                continue
            unit = row.segment_index if credit == "segment" else turn.index
            for p in range(turn.response_start, turn.response_end):
                assert row.loss_mask[p] == 1
                assert row.advantages[p] == pytest.approx(unit_adv[row.trajectory_id][unit])
            checked.add((row.trajectory_id, row.segment_index))
        assert segment.index == row.segment_index
    assert len(checked) == 9
    # the units' advantages differ within a trajectory, so a wrong unit would be seen
    assert all(len({round(a, 9) for a in units}) > 1 for units in unit_adv)


# 8 ────────────────────────────────────────────────────────────────────────────────────────────
def _greedy(model: torch.nn.Module, context: list[int], n: int) -> tuple[list[int], list[float]]:
    """Greedy generation through transformers' `generate` (KV cache), recording log-probs."""
    out = model.generate(
        torch.tensor([context]),
        attention_mask=torch.ones(1, len(context), dtype=torch.long),
        max_new_tokens=n,
        do_sample=False,
        output_logits=True,
        return_dict_in_generate=True,
        pad_token_id=0,
        eos_token_id=None,
    )
    ids = out.sequences[0, len(context) :].tolist()
    logps = [
        float(torch.log_softmax(step[0].float(), -1)[tok]) for step, tok in zip(out.logits, ids, strict=True)
    ]
    return ids, logps


def test_invariant_08_recomputed_logprobs_match_generation_logprobs():
    model = tiny_model(seed=8)
    context, types, logps = [1, 5, 6, 7], ["task"] * 4, [None] * 4
    for feedback in ([8, 9], [10, 11, 12]):
        ids, lps = _greedy(model, context, 6)  # the prompt is the whole context so far: append-only
        context += ids + feedback
        types += ["response"] * len(ids) + ["feedback"] * len(feedback)
        logps += lps + [None] * len(feedback)
    row = Row(
        token_ids=context,
        loss_mask=[int(t == "response") for t in types],
        advantages=[1.0] * len(context),
        old_logprobs=[lp if lp is not None else 0.0 for lp in logps],
        group_id=0,
        trajectory_id=0,
        segment_index=0,
    )
    # Batched with a longer row so that this one is right-padded, as in training.
    longer = Row(list(range(3, 40)), [1] * 37, [1.0] * 37, [0.0] * 37, 0, 1, 0)
    recomputed = row_logprobs(model, [row, longer], pad_id=0, autocast=False)[0]
    diffs = [abs(a - b) for a, b, m in zip(recomputed, row.old_logprobs, row.loss_mask, strict=True) if m]
    assert len(diffs) == 12
    assert max(diffs) < 1e-4
    # The check can fail: a shifted context (not the row's own) gives different log-probs.
    shifted = row_logprobs(
        model, [dataclasses.replace(row, token_ids=[4] + context[1:])], pad_id=0, autocast=False
    )[0]
    assert (
        max(abs(a - b) for a, b, m in zip(shifted, row.old_logprobs, row.loss_mask, strict=True) if m) > 1e-4
    )


# 9 ────────────────────────────────────────────────────────────────────────────────────────────
def _rows_for_model(seed: int) -> list[Row]:
    group = [
        make_trajectory([[0.1, 0.4], [1.0]], sample=0),
        make_trajectory([[0.0], [0.2, 0.3], [0.5]], sample=1),
        make_trajectory([[0.6, TurnSpec(0.6, response_len=5)]], sample=2),
    ]
    return build_rows([group], "atrl_hybrid", "segment", 0.9)


def test_invariant_09_first_on_policy_step_gradient_is_policy_gradient():
    model = tiny_model(seed=9)
    rows = _rows_for_model(9)
    for row, lps in zip(rows, row_logprobs(model, rows, pad_id=0, autocast=False), strict=True):
        row.old_logprobs = lps  # on-policy: ratio = 1
    model.zero_grad()
    accumulate_gradients(model, rows, LossConfig(), pad_id=0, micro_batch_size=2, autocast=False)
    ppo = _grads(model)
    model.zero_grad()
    batch = collate(rows, pad_id=0)
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
    lp = logprobs_from_logits(logits, batch.input_ids[:, 1:])
    mask = batch.loss_mask[:, 1:]
    pg = -(batch.advantages[:, 1:] * lp * mask).sum() / mask.sum()  # REINFORCE with advantages
    pg.backward()
    plain = _grads(model)
    assert sum(float(g.abs().sum()) for g in plain) > 0
    for a, b in zip(ppo, plain, strict=True):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-4)


# 10 ───────────────────────────────────────────────────────────────────────────────────────────
def test_invariant_10_results_do_not_depend_on_micro_batch_split():
    model = tiny_model(seed=10)
    rows = _perturbed(_rows_for_model(10), model, seed=10)
    results = []
    for size, max_tokens in [(100, None), (1, None), (2, None), (3, 40)]:
        model.zero_grad()
        stats = accumulate_gradients(
            model, rows, LossConfig(), pad_id=0, micro_batch_size=size, max_tokens=max_tokens, autocast=False
        )
        results.append((stats, _grads(model)))
    (base_stats, base_grads), rest = results[0], results[1:]
    assert base_stats.clipped > 0  # the clip is exercised
    for stats, grads in rest:
        assert stats.loss == pytest.approx(base_stats.loss, abs=1e-6)
        assert stats.tokens == base_stats.tokens and stats.clipped == base_stats.clipped
        for a, b in zip(grads, base_grads, strict=True):
            assert torch.allclose(a, b, atol=1e-6, rtol=1e-4)


# 11 ───────────────────────────────────────────────────────────────────────────────────────────
def test_invariant_11_no_nan_for_group_of_one_ragged_or_all_equal():
    groups = {
        "one": [make_trajectory([[0.5], [1.0]])],
        "ragged": [make_trajectory([[0.5]]), make_trajectory([[0.1], [0.2], [0.9]], sample=1)],
        "equal": [make_trajectory([[1.0]], sample=i) for i in range(3)],
        "zeros": [make_trajectory([[0.0], [0.0]], sample=i) for i in range(3)],
    }
    for (label, group), name, credit, scale in itertools.product(
        groups.items(), estimator_names(), CREDITS, ["none", "std"]
    ):
        adv = group_advantages(group, name, credit, 0.9, AdvantageOptions(atrl_scale=scale))
        assert all(math.isfinite(a) for units in adv for a in units), (label, name, credit, scale)
        if label in ("one", "equal", "zeros"):
            assert all(a == 0.0 for units in adv for a in units), (label, name, credit)
    model = tiny_model(seed=11)
    rows = build_rows([groups["ragged"], groups["one"]], "atrl", "segment", 0.9)
    assert rows and all(r.group_id == 0 for r in rows)
    for row in rows:
        row.ref_logprobs = [lp - 0.1 for lp in row.old_logprobs]
    stats = accumulate_gradients(model, rows, LossConfig(kl_beta=0.1), pad_id=0, autocast=False)
    assert math.isfinite(stats.loss) and all(torch.isfinite(g).all() for g in _grads(model))
    assert accumulate_gradients(model, [], LossConfig(), pad_id=0).tokens == 0


# 12 ───────────────────────────────────────────────────────────────────────────────────────────
class _RecordingPolicy:
    """Passes requests to a policy and keeps every prompt it was asked to continue."""

    def __init__(self, policy) -> None:  # noqa: ANN001
        self.policy, self.prompts = policy, []

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self.policy, name)

    def generate(self, requests, params):  # noqa: ANN001, ANN201
        self.prompts += [(r.task_id, r.sample, r.turn, r.kind, list(r.prompt_ids)) for r in requests]
        return self.policy.generate(requests, params)


def append_only_violations(trajectories, prompts, budget: int) -> list[str]:
    """Every response's (and summary's) prompt is a prefix of its segment's final context, and
    no context exceeds the budget."""
    found = []
    by_key = {(t.task_id, t.sample): t for t in trajectories}
    for task_id, sample, turn, kind, prompt in prompts:
        traj = by_key[(task_id, sample)]
        segment = traj.segments[traj.turns[turn].segment]
        if segment.token_ids[: len(prompt)] != prompt:
            found.append(
                f"{task_id}#{sample} {kind} {turn}: prompt is not a prefix of segment {segment.index}"
            )
        if kind == "turn" and len(prompt) != traj.turns[turn].response_start:
            found.append(f"{task_id}#{sample} turn {turn}: response does not start where its prompt ends")
    for traj in trajectories:
        for segment in traj.segments:
            if len(segment.token_ids) > budget:
                found.append(
                    f"{traj.task_id}#{traj.sample} segment {segment.index}: {len(segment.token_ids)} > {budget}"
                )
    return found


def test_invariant_12_agent_contexts_are_append_only_and_within_budget(tmp_path):
    from atrl.agent.config import AgentConfig
    from atrl.agent.episode import run_episodes
    from atrl.policy.hf import HFPolicy
    from atrl.rl.reward_source import SyntheticScorer
    from atrl.rl.tiny import build_tiny_model
    from atrl.tasks.task import Task

    policy = _RecordingPolicy(HFPolicy(build_tiny_model(tmp_path / "m", seed=12)))
    tasks = [Task(id="synthetic/t", suite="synthetic", name="t", level=1, source="X = 1\n")]
    budget = 700
    config = AgentConfig(
        max_turns=4,
        turns_per_segment=2,
        max_segments=2,
        context_budget=budget,
        max_response_tokens=8,
        summary_tokens=4,
        platform="interpreter",
        seed=12,
    )
    trajectories = run_episodes(policy, SyntheticScorer("a", 4), tasks, 2, config)
    assert all(len(t.segments) == 2 and t.compactions >= 1 for t in trajectories)
    assert len(policy.prompts) >= 10
    assert append_only_violations(trajectories, policy.prompts, budget) == []
    # The check bites: a context edited before a response, or a smaller budget, is reported.
    assert append_only_violations(trajectories, policy.prompts, 100)
    trajectories[0].segments[0].token_ids[3] += 1
    assert append_only_violations(trajectories, policy.prompts, budget)
