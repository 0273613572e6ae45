"""Tier 1 of the credit experiment: per-group policy gradients of different estimators on the same
fixed rollouts (a tiny model's real episodes), the sketch they are compared in, and the statistics."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from rl_builders import synthetic_tasks, tiny_config

from atrl.errors import UsageError
from atrl.rl.credit_gradients import (
    PARTS,
    CountSketch,
    EstimatorArm,
    bootstrap,
    estimator_gradients,
    load_groups,
    part_gradients,
    share,
    signal_to_noise,
    split_half_cosines,
)
from atrl.rl.rows import build_rows
from atrl.rl.update import LossConfig, accumulate_gradients

SEG, TRAJ = EstimatorArm("seg", "atrl", "segment"), EstimatorArm("traj", "atrl", "trajectory")
GRPO, SEG_DISCOUNTED = EstimatorArm("grpo", "grpo", "trajectory"), EstimatorArm("seg09", "atrl", "segment", 0.9)


def _run(tmp_path_factory, name: str, max_segments: int):
    from atrl.rl.trainer import Trainer

    out = tmp_path_factory.mktemp(name)
    cfg = tiny_config(out, steps=1, synthetic_saturation=2)
    cfg = cfg.model_copy(update={"agent": {**cfg.agent, "max_segments": max_segments}})
    trainer = Trainer(cfg, tasks=synthetic_tasks(2))
    trainer.run()
    return out, trainer


@pytest.fixture(scope="module")
def two_segment_run(tmp_path_factory):
    return _run(tmp_path_factory, "two", 2)


@pytest.fixture(scope="module")
def one_segment_run(tmp_path_factory):
    return _run(tmp_path_factory, "one", 1)


def _grads(run, arm):
    out, trainer = run
    groups = load_groups(out, group_size=4)
    sketch = CountSketch(trainer.model, dim=512)
    return groups, estimator_gradients(trainer.model, groups, [arm], sketch, trainer.pad_id)[arm.name]


def _direct(model, group, arm, sketch, pad_id) -> dict[str, torch.Tensor]:
    """The reference: the PPO loss's own backward (ratio 1) over the arm's rows, once per part,
    each part's rows with their loss mask cut to it (the token mean stays over all rows)."""
    rows = build_rows([group], arm.estimator, arm.credit, arm.gamma)
    total = sum(r.num_trainable for r in rows)
    out = {}
    for part in PARTS:
        cut = []
        for row in rows:
            types = group[row.trajectory_id].segments[row.segment_index].token_types
            keep = [bool(m) and (part == "all" or (part == "later_segments" and row.segment_index >= 1)
                                 or (part == "summaries" and i < len(types) and types[i] == "summary"))
                    for i, m in enumerate(row.loss_mask)]
            cut.append(replace(row, loss_mask=[int(k) for k in keep],
                               advantages=[a if k else 0.0 for a, k in zip(row.advantages, keep, strict=True)]))
        model.zero_grad(set_to_none=True)
        accumulate_gradients(model, cut, LossConfig(), pad_id, total_tokens=total, autocast=False,
                             with_entropy=False, old_from_current=True)
        out[part] = sketch()
    model.zero_grad(set_to_none=True)
    return out


def test_every_arm_equals_its_own_ppo_backward_on_the_same_rows(two_segment_run):
    # the arms are weighted sums of part gradients taken once: each must equal its own backward
    out, trainer = two_segment_run
    groups = load_groups(out, group_size=4)
    sketch = CountSketch(trainer.model, dim=512)
    arms = [SEG, TRAJ, GRPO, SEG_DISCOUNTED]
    combined = estimator_gradients(trainer.model, groups, arms, sketch, trainer.pad_id)
    _, parts = part_gradients(trainer.model, groups[0], sketch, trainer.pad_id)
    assert any(p.summary for p in parts) and any(not p.summary and p.segment >= 1 for p in parts)
    compared = set()
    for g, group in enumerate(groups):
        for arm in arms:
            direct = _direct(trainer.model, group, arm, sketch, trainer.pad_id)
            for part in PARTS:
                expected, got = direct[part], combined[arm.name][part][g]
                scale = float(expected.abs().max())
                assert torch.allclose(got, expected, rtol=1e-4, atol=1e-6 * scale + 1e-12), (g, arm.name, part)
                if scale > 0:
                    compared.add((arm.name, part))
    assert compared == {(arm.name, part) for arm in arms for part in PARTS}  # every arm and part non-zero somewhere


def test_groups_come_from_the_run_files(two_segment_run):
    out, _ = two_segment_run
    groups = load_groups(out, group_size=4)
    assert [len(g) for g in groups] == [4, 4]
    assert all(len(t.segments) == 2 for g in groups for t in g)
    with pytest.raises(UsageError, match="not a multiple of group_size 3"):
        load_groups(out, group_size=3)


def test_segment_and_trajectory_credit_coincide_on_single_segment_episodes(one_segment_run):
    # the negative control of the study, here on gradients: one segment, one credit unit
    _, seg = _grads(one_segment_run, SEG)
    _, traj = _grads(one_segment_run, TRAJ)
    assert seg["all"].abs().sum() > 0
    assert torch.allclose(seg["all"], traj["all"], rtol=1e-9, atol=1e-12)
    assert seg["later_segments"].abs().sum() == 0


def test_segment_credit_changes_the_gradient_of_multi_segment_episodes(two_segment_run):
    _, seg = _grads(two_segment_run, SEG)
    _, traj = _grads(two_segment_run, TRAJ)
    assert not torch.allclose(seg["all"], traj["all"])
    # parts are parts of the whole gradient (a plain ratio: `share` takes the noise off, all of it at 2 groups)
    for grads in (seg, traj):
        later, whole = grads["later_segments"].sum(0), grads["all"].sum(0)
        assert 0 < abs(float(later @ whole) / float(whole @ whole)) < 2


def test_the_sketch_is_linear_and_keeps_norms_roughly():
    model = torch.nn.Linear(64, 32)
    sketch = CountSketch(model, dim=4096, seed=1)
    grads = [torch.randn_like(model.weight) for _ in range(2)]
    sketched = []
    for g in (grads[0], grads[1], grads[0] + grads[1]):
        model.weight.grad, model.bias.grad = g.clone(), None
        sketched.append(sketch())
    assert torch.allclose(sketched[0] + sketched[1], sketched[2], atol=1e-5)  # float32 grads
    assert float(sketched[0].norm() ** 2) == pytest.approx(float(grads[0].norm() ** 2), rel=0.15)


def test_split_half_and_signal_to_noise_on_known_gradients():
    torch.manual_seed(0)
    signal = torch.ones(4096, dtype=torch.float64)
    consistent = signal + 0.01 * torch.randn(40, 4096, dtype=torch.float64)
    noise = torch.randn(40, 4096, dtype=torch.float64)  # halves independent: cosine ~ 0 ± 1/64
    assert min(split_half_cosines(consistent, splits=50)) > 0.99
    assert abs(sum(split_half_cosines(noise, splits=200)) / 200) < 0.1
    assert signal_to_noise(consistent) > 50 * signal_to_noise(noise)
    with pytest.raises(UsageError):
        split_half_cosines(consistent[:1])


def test_signal_to_noise_takes_the_noise_off_the_mean_norm_and_its_bootstrap_covers_it():
    torch.manual_seed(0)
    n, dim = 40, 8192
    noise = torch.randn(n, dim, dtype=torch.float64)  # no signal: ‖ḡ‖ over its standard error is about 1
    assert signal_to_noise(noise) < 0.3
    signal = torch.zeros(dim, dtype=torch.float64)
    signal[0] = (dim / n) ** 0.5  # ‖E g‖ equal to the mean's standard error: a signal-to-noise of 1
    grads = signal + torch.randn(n, dim, dtype=torch.float64)
    estimate = signal_to_noise(grads)
    assert 0.75 < estimate < 1.25
    low, high = bootstrap(lambda idx: signal_to_noise(grads[idx]), n, 300, estimate=estimate)
    assert low <= estimate <= high and high - low < 1.0


def test_share_takes_the_noise_off_and_its_bootstrap_covers_it():
    """A part that carries half of the signal and nearly all of the noise has a share of 0.5, not the
    noise's share (the plain ratio of sums gives about 0.75 here: a signal-to-noise of 1, as on the relay)."""
    torch.manual_seed(0)
    n, dim = 80, 8192
    signal = torch.zeros(dim, dtype=torch.float64)
    signal[0] = 5.0  # ‖E Σ whole‖ = 10n = 800 against a noise norm of about sqrt(n · dim) = 810
    later = signal + torch.randn(n, dim, dtype=torch.float64)
    first = signal + 0.05 * torch.randn(n, dim, dtype=torch.float64)
    whole = later + first
    plain = float(later.sum(0) @ whole.sum(0)) / float(whole.sum(0) @ whole.sum(0))
    estimate = share(later, whole)
    assert plain > 0.7 and abs(estimate - 0.5) < 0.1
    low, high = bootstrap(lambda idx: share(later[idx], whole[idx]), n, 300, estimate=estimate)
    assert low <= 0.5 <= high
    assert share(whole, whole) == pytest.approx(1.0)


def test_the_arms_share_one_forward_per_segment(two_segment_run):
    out, trainer = two_segment_run
    groups = load_groups(out, group_size=4)
    sketch = CountSketch(trainer.model, dim=64)
    calls = []
    handle = trainer.model.register_forward_hook(lambda *_: calls.append(1))
    try:
        counts = []
        for arms in ([SEG], [SEG, TRAJ, GRPO, SEG_DISCOUNTED]):
            calls.clear()
            estimator_gradients(trainer.model, groups, arms, sketch, trainer.pad_id)
            counts.append(len(calls))
    finally:
        handle.remove()
    segments = sum(len(t.segments) for g in groups for t in g)
    assert counts == [segments, segments]
