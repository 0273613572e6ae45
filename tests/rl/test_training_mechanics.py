"""The trainer's mechanics (ATRL-SPEC, "Training mechanics"): weights that can move, honest ratios,
the metrics that show them, LoRA checkpoints that load, and refusals of setups that cannot learn.

Tiny random models on the CPU; a bf16 policy stands for the GPU case (HFPolicy loads bf16 there).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest
import torch
from rl_builders import synthetic_tasks, tiny_config

from atrl.errors import UsageError
from atrl.jsonio import read_journal
from atrl.rl.loss import logprobs_from_logits, ppo_loss
from atrl.rl.metrics import mismatch_metrics, summary_metrics
from atrl.rl.rows import Row
from atrl.rl.trainer import Trainer
from atrl.rl.update import row_logprobs

TASKS = synthetic_tasks()
TIMING = ("time_generation_s", "time_evaluation_s", "time_update_s", "time_step_s", "generation_tokens_per_s")


def _bf16_policy(out_dir):
    """The tiny model loaded the way a GPU loads the default one: bf16 weights."""
    from atrl.policy.hf import HFPolicy
    from atrl.rl.tiny import build_tiny_model

    directory = out_dir / "tiny-model"
    build_tiny_model(directory, 0)
    return HFPolicy(directory, dtype=torch.bfloat16, engine=None, name="tiny-bf16")


# -- weights that can move ---------------------------------------------------------------------
def test_fp32_master_weights_move_where_direct_bf16_updates_are_rounded_away(tmp_path):
    changed = {}
    for master in (True, False):
        out = tmp_path / str(master)
        out.mkdir()
        config = tiny_config(out, lr=1e-5, steps=1, fp32_master=master)
        if master:
            trainer = Trainer(config, policy=_bf16_policy(out), tasks=TASKS)
        else:
            with pytest.warns(RuntimeWarning, match="low-precision"):
                trainer = Trainer(config, policy=_bf16_policy(out), tasks=TASKS)
        record = trainer.train_step()
        changed[master] = record
        if master:
            assert trainer.chassis.separate_master
            assert all(p.dtype == torch.float32 for p in trainer.model.parameters())
            # the sampling weights are the master's, rounded to bf16
            sampled = dict(trainer.policy.model.named_parameters())
            for name, p in trainer.model.named_parameters():
                assert sampled[name].dtype == torch.bfloat16
                assert torch.equal(sampled[name], p.detach().to(torch.bfloat16))
    # (embedding rows of tokens no response used get no gradient, hence not ~100%)
    assert changed[True]["update_fraction_changed"] > 0.7
    assert changed[False]["update_fraction_changed"] < 0.5 * changed[True]["update_fraction_changed"]
    assert changed[True]["update_norm"] > changed[False]["update_norm"]
    # the bf16 sampling copy moves less than the master but it is what the sampler sees
    assert 0 < changed[True]["policy_fraction_changed"] <= changed[True]["update_fraction_changed"]


# -- honest ratios -----------------------------------------------------------------------------
@pytest.mark.parametrize("epochs", [1, 2])
def test_sampler_logprobs_are_kept_and_the_ratio_uses_the_trainers_recompute(tmp_path, epochs):
    trainer = Trainer(tiny_config(tmp_path, steps=1, ppo_epochs=epochs), policy=_bf16_policy(tmp_path), tasks=TASKS)
    trajectories, _ = trainer.rollout(0)
    rows, _ = trainer.rows_for(trajectories)
    assert rows
    sampled = {id(r): list(r.sampler_logprobs) for r in rows}
    for row in rows:  # the row's sampler log-probs are the segment's recorded ones
        segment = trajectories[row.trajectory_id].segments[row.segment_index]
        for p, m in enumerate(row.loss_mask):
            if m:
                assert row.sampler_logprobs[p] == segment.logprobs[p]
    expected = row_logprobs(trainer.model, rows, pad_id=trainer.pad_id, autocast=False)  # before the update
    trainer.update(rows)  # one epoch: π_old from the update's own forward; two: a scoring forward first
    for row, lps in zip(rows, expected, strict=True):
        assert row.sampler_logprobs == sampled[id(row)]
        trainable = [p for p, m in enumerate(row.loss_mask) if m]
        assert [row.old_logprobs[p] for p in trainable] == pytest.approx([lps[p] for p in trainable], abs=1e-6)
    metrics = mismatch_metrics(rows)
    # bf16 KV-cache sampling against the fp32 trainer: a real, measured mismatch
    assert metrics["mismatch_abs_max"] > 1e-3
    assert metrics["mismatch_k3"] > 0


@pytest.mark.parametrize(("epochs", "kl_beta", "forwards"), [(1, 0.0, 1), (2, 0.0, 3), (1, 0.1, 2)])
def test_one_epoch_takes_old_log_probs_from_the_updates_own_forward(tmp_path, epochs, kl_beta, forwards):
    trainer = Trainer(tiny_config(tmp_path, steps=1, ppo_epochs=epochs, kl_beta=kl_beta, micro_batch_size=1000),
                      tasks=TASKS)
    rows, _ = trainer.rows_for(trainer.rollout(0)[0])
    calls = []
    for model in (trainer.model, trainer.ref_model):  # the reference is a model of its own (no LoRA)
        if model is not None:
            model.register_forward_hook(lambda *_: calls.append(1))
    trainer.update(rows)
    assert len(calls) == forwards  # one micro-batch: scoring (when needed), reference (KL), each epoch


@pytest.mark.parametrize("error_class", ["device-busy", "task:reference-error"])
def test_a_group_with_a_judge_side_verdict_is_left_out_of_the_update(tmp_path, error_class):
    # device-busy says the judge's GPU was full, task:reference-error that the task's own reference
    # failed: neither says the kernel failed, so no advantage comes from them
    from atrl.rl.metrics import rollout_metrics

    trainer = Trainer(tiny_config(tmp_path, steps=1), policy=_bf16_policy(tmp_path), tasks=TASKS)
    trajectories, _ = trainer.rollout(0)
    for i, traj in enumerate(trajectories):  # a spread of scores in every group: each carries signal
        for turn in traj.turns:
            turn.score = 0.1 * (i % 4) + 0.05 * turn.index
        traj.best_score = max(turn.score for turn in traj.turns)
        traj.best_turn = max(range(len(traj.turns)), key=lambda k: traj.turns[k].score)
    rows, groups = trainer.rows_for(trajectories)
    g = trainer.config.group_size
    by_group = {k: sum(1 for r in rows if r.trajectory_id // g == k) for k in range(groups)}
    assert groups == 2 and all(by_group.values()), by_group  # both groups carry signal
    trajectories[1].turns[0].verdict = {"ok": False, "error_class": error_class}  # in group 0
    rows, _ = trainer.rows_for(trajectories)
    assert len(rows) == by_group[1] and {r.task_id for r in rows} == {trajectories[g].task_id}
    metrics = rollout_metrics(trajectories)
    assert metrics["judge_side_turns"] == 1.0
    assert metrics["device_busy_turns"] == (1.0 if error_class == "device-busy" else 0.0)


def test_truncated_importance_weights_scale_each_token_and_stop_at_the_cap():
    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(2, 6, 9, generator=gen, requires_grad=True)
    targets = torch.randint(0, 9, (2, 6), generator=gen)
    mask = torch.ones(2, 6)
    lp = logprobs_from_logits(logits, targets)
    old = lp.detach()
    sampler = old + torch.tensor([[-2.0, -0.5, 0.0, 0.3, 1.0, -3.0], [0.1, 0.2, -0.1, 0.0, 0.5, -1.0]])
    adv = torch.randn(2, 6, generator=gen)
    loss, stats = ppo_loss(lp, old, adv, mask, 12, sampler_logprobs=sampler, is_cap=2.0)
    weights = torch.exp(old - sampler).clamp(max=2.0)
    assert float(loss) == pytest.approx(float(-(weights * adv).sum() / 12), rel=1e-5)  # ratio = 1 here
    assert stats.is_truncated == float((torch.exp(old - sampler) >= 2.0).sum())
    assert stats.is_truncated >= 2
    plain, _ = ppo_loss(lp, old, adv, mask, 12)
    assert float(plain) != pytest.approx(float(loss))


def test_second_ppo_epoch_moves_the_ratio_and_steps_the_optimizer_again(tmp_path):
    trainer = Trainer(tiny_config(tmp_path, steps=2, ppo_epochs=3, lr=5e-2), tasks=TASKS)
    record = trainer.train_step()
    assert trainer.scheduler.last_epoch == 3  # one scheduler step per epoch
    state = next(iter(trainer.optimizer.state.values()))
    assert int(state["step"]) == 3
    assert abs(record["ratio_mean"] - 1.0) > 1e-3  # the last epoch is off-policy
    assert record["approx_kl"] > 0


def test_mask_truncated_masks_responses_cut_at_the_token_limit():
    from rl_builders import TurnSpec, make_trajectory

    from atrl.rl.rows import build_rows

    group = [
        make_trajectory([[TurnSpec(0.2, finish_reason="length")], [0.6]], sample=0),
        make_trajectory([[0.5], [0.5]], sample=1),
    ]
    for mask_truncated in (False, True):
        rows = build_rows([group], "atrl", "segment", 1.0, mask_truncated=mask_truncated)
        first = next(r for r in rows if r.trajectory_id == 0 and r.segment_index == 0)
        turn = group[0].turns[0]
        span = range(turn.response_start, turn.response_end)
        assert all(first.loss_mask[p] == (0 if mask_truncated else 1) for p in span)
        summary = group[0].segments[0].spans[-1]
        assert all(first.loss_mask[p] == 1 for p in range(summary.start, summary.end))


@pytest.mark.parametrize("lora", [False, True])
def test_kl_to_the_reference_is_computed_in_the_trainer(tmp_path, lora):
    trainer = Trainer(tiny_config(tmp_path, steps=3, kl_beta=0.5, lr=5e-2, lora=lora, lora_r=4), tasks=TASKS)
    records = [trainer.train_step() for _ in range(3)]
    assert records[0]["ref_kl"] == pytest.approx(0.0, abs=1e-6)  # still the reference
    assert records[-1]["ref_kl"] > 1e-5  # moved away from it, and measured


def test_kl_reference_of_a_continued_adapter_is_that_adapter_not_the_bare_base(tmp_path):
    """Training that continues an adapter starts from base + adapter: the KL's reference is that
    start, so before any update the KL is 0 (the bare base would differ from it)."""
    adapter = _saved_adapter(tmp_path)
    trainer = Trainer(tiny_config(tmp_path / "run", model=f"hf:{adapter}", lora=True, kl_beta=0.5, steps=1),
                      tasks=TASKS)
    record = trainer.train_step()
    assert record["rows"] > 0
    assert record["ref_kl"] == pytest.approx(0.0, abs=1e-6)


# -- metrics -----------------------------------------------------------------------------------
def test_step_metrics_show_segments_summaries_and_per_segment_advantages(tmp_path):
    record = Trainer(tiny_config(tmp_path, steps=1), tasks=TASKS).train_step()
    assert record["multi_segment_fraction"] == 1.0
    assert record["summaries_written"] == 8  # one compaction per episode
    assert record["summary_used_fraction"] + record["summary_fallback_rate"] >= 0.99
    assert record["rows_seg0"] > 0 and record["rows_seg1"] > 0
    for key in ("update_norm", "update_fraction_changed", "mismatch_abs_mean", "mismatch_k3",
                "is_weight_mean", "clip_fraction", "compaction_warning"):
        assert key in record


def test_summary_metrics_count_summaries_no_segment_carried():
    from rl_builders import make_trajectory

    carried = make_trajectory([[0.1], [0.5]])  # one summary, carried into segment 2
    wasted = make_trajectory([[0.1], [0.5]], last_summary=True, sample=1)  # plus one after the last
    replaced = make_trajectory([[0.1], [0.5]], fallback={0}, sample=2)
    metrics = summary_metrics([carried, wasted, replaced])
    assert metrics["summaries_written"] == 4
    assert metrics["summary_used_fraction"] == pytest.approx(3 / 4)
    assert metrics["summary_fallback_rate"] == pytest.approx(1 / 4)


def test_run_meant_to_compact_warns_when_episodes_stay_single_segment(tmp_path, capsys):
    single = tiny_config(tmp_path / "a", steps=1, min_multi_segment_fraction=0.8,
                         agent=dict(turns_per_segment=2))
    record = Trainer(single, tasks=TASKS).train_step()
    assert record["multi_segment_fraction"] == 0.0
    assert record["compaction_warning"] is True
    assert "≥ 2 segments" in capsys.readouterr().err
    compacting = tiny_config(tmp_path / "b", steps=1, min_multi_segment_fraction=0.8)
    assert Trainer(compacting, tasks=TASKS).train_step()["compaction_warning"] is False


# -- refusals ----------------------------------------------------------------------------------
def test_vllm_rollouts_are_refused_for_training(tmp_path):
    with pytest.raises(UsageError, match="rollout_engine.*receives no updates"):
        tiny_config(tmp_path, rollout_engine="vllm")

    class DetachedEngine:
        name = "detached"
        follows_model_weights = False

    from atrl.rl.trainer import _load_policy

    policy = _load_policy("tiny-random:0", tmp_path)
    policy.engine = DetachedEngine()
    with pytest.raises(UsageError, match="does not\\s+receive the trained weights"):
        Trainer(tiny_config(tmp_path), policy=policy, tasks=TASKS)


# -- LoRA --------------------------------------------------------------------------------------
def _saved_adapter(tmp_path) -> Path:
    """A rank-3 LoRA adapter with non-zero weights over a tiny random base, saved as a policy."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from atrl.policy.adapters import write_base_spec
    from atrl.rl.tiny import build_tiny_model

    base_dir = tmp_path / "base"
    build_tiny_model(base_dir, 0)
    torch.manual_seed(1)
    start = get_peft_model(AutoModelForCausalLM.from_pretrained(str(base_dir)),
                           LoraConfig(r=3, lora_alpha=6, target_modules="all-linear", task_type="CAUSAL_LM"))
    with torch.no_grad():
        for name, p in start.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)  # a non-trivial adapter (B starts at zero)
    adapter = tmp_path / "adapter"
    start.save_pretrained(str(adapter))
    write_base_spec(adapter, f"hf:{base_dir}")
    return adapter


def _logits(model: torch.nn.Module, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits.float()


@pytest.mark.slow
def test_lora_trains_saves_reloads_as_a_policy_exports_and_resumes_exactly(tmp_path):
    from atrl.policy import load_policy
    from atrl.policy.export import export_merged

    def config(out, **kw):
        return tiny_config(out, steps=4, save_every=2, lora=True, lora_r=4, lr=5e-2, **kw)

    straight = Trainer(config(tmp_path / "a"), tasks=TASKS)
    base = copy.deepcopy(straight.model.get_base_model()) if hasattr(straight.model, "get_base_model") else None
    assert base is not None
    assert all(p.dtype == torch.float32 for p in straight.model.parameters() if p.requires_grad)
    records = straight.run()
    assert all(r["update_fraction_changed"] > 0.5 for r in records)
    adapter = tmp_path / "a" / "checkpoints" / "step_000004" / "model"
    assert (adapter / "adapter_config.json").exists() and (adapter / "atrl_base.json").exists()
    assert (adapter / "base_config.json").exists()  # reloads need not parse the base (a GGUF file) for it

    ids = list(range(3, 30))
    trained = _logits(straight.model, ids)
    loaded = load_policy(f"hf:{adapter}", engine=None)
    assert torch.allclose(_logits(loaded.model, ids), trained, atol=1e-4)
    assert not torch.allclose(_logits(base, ids), trained, atol=1e-3)  # the adapter did something

    exported = export_merged(adapter, tmp_path / "export", dtype="float32")
    from transformers import AutoModelForCausalLM

    plain = AutoModelForCausalLM.from_pretrained(str(exported))
    assert torch.allclose(_logits(plain, ids), trained, atol=1e-4)

    first = Trainer(config(tmp_path / "b"), tasks=TASKS)
    for _ in range(3):  # past the step-2 checkpoint, then the process "dies"
        first.train_step()
    first.metrics.close()
    resumed = Trainer(config(tmp_path / "b"), tasks=TASKS)
    assert resumed.step == 2
    resumed.run()
    logged = list(read_journal(tmp_path / "b" / "metrics.jsonl"))

    def strip(r: dict) -> dict:
        return {k: v for k, v in r.items() if k not in TIMING}

    assert [strip(r) for r in logged] == [strip(r) for r in records]


def test_an_adapter_without_a_loadable_base_names_the_fix(tmp_path):
    import json

    from atrl.policy import load_policy

    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "somewhere/else.gguf"}))
    with pytest.raises(UsageError, match="atrl_base.json"):
        load_policy(f"hf:{adapter}")


def test_update_norm_is_zero_without_signal_and_finite_otherwise(tmp_path):
    trainer = Trainer(tiny_config(tmp_path, steps=1), tasks=TASKS)
    record = trainer.train_step()
    assert math.isfinite(record["update_norm"]) and record["update_norm"] > 0
    rows_free = Row([1, 2], [0, 0], [0.0, 0.0], [0.0, 0.0], 0, 0, 0)
    assert mismatch_metrics([rows_free])["mismatch_abs_mean"] == 0.0


@pytest.mark.gpu
def test_a_step_on_a_gpu_records_its_own_peak_memory(tmp_path):
    trainer = Trainer(tiny_config(tmp_path, steps=2), tasks=TASKS)
    first = trainer.train_step()
    assert 0 < first["gpu_peak_gib"] <= first["gpu_peak_reserved_gib"]
    del first
    torch.empty(2**28, dtype=torch.uint8, device=trainer.device)  # 0.25 GiB, freed before the next step
    assert trainer.train_step()["gpu_peak_gib"] < 0.25  # the tiny model's step, not what came before


def test_lora_adapters_are_fp32_over_a_frozen_low_precision_base():
    from rl_builders import tiny_model

    from atrl.rl.chassis import Chassis, LoraSettings, OptimSettings

    chassis = Chassis(tiny_model().to(torch.bfloat16), OptimSettings(lr=1e-3, total_steps=1), LoraSettings(r=2))
    trainable = [p for p in chassis.model.parameters() if p.requires_grad]
    frozen = [p for p in chassis.model.parameters() if not p.requires_grad]
    assert trainable and all(p.dtype == torch.float32 for p in trainable)
    assert frozen and all(p.dtype == torch.bfloat16 for p in frozen)
    assert not chassis.separate_master  # the policy samples through the adapters themselves


def test_lora_training_from_an_adapter_continues_that_adapter_over_its_own_base(tmp_path):
    """`model=hf:ADAPTER` with `lora=true` trains the adapter itself (its rank, starting from its
    weights), and the checkpoint is one adapter over the original base: what ships as a policy."""
    import json

    from atrl.policy import load_policy

    base_dir = tmp_path / "base"
    adapter = _saved_adapter(tmp_path)
    ids = list(range(3, 30))
    merged_start = _logits(load_policy(f"hf:{adapter}", engine=None).model, ids)

    out = tmp_path / "run"
    trainer = Trainer(tiny_config(out, model=f"hf:{adapter}", lora=True, lora_r=5, steps=2, save_every=2,
                                  lr=5e-2), tasks=TASKS)
    assert torch.allclose(_logits(trainer.model, ids), merged_start, atol=1e-5)  # starts from the adapter
    assert all(p.dtype == torch.float32 for p in trainer.model.parameters() if p.requires_grad)
    records = trainer.run()
    assert any(r["update_norm"] > 0 for r in records)
    saved = out / "checkpoints" / "step_000002" / "model"
    assert json.loads((saved / "adapter_config.json").read_text())["r"] == 3  # the same adapter, not a second
    assert json.loads((saved / "atrl_base.json").read_text())["policy"] == f"hf:{base_dir}"
    trained = _logits(trainer.model, ids)
    assert not torch.allclose(trained, merged_start, atol=1e-3)
    assert torch.allclose(_logits(load_policy(f"hf:{saved}", engine=None).model, ids), trained, atol=1e-4)
    trainer.metrics.close()
    resumed = Trainer(tiny_config(out, model=f"hf:{adapter}", lora=True, steps=3, save_every=2, lr=5e-2), tasks=TASKS)
    assert resumed.step == 2  # the continued adapter resumes from its own checkpoint
    assert torch.allclose(_logits(resumed.model, ids), trained, atol=1e-5)


def test_solution_nll_is_measured_each_step_before_its_update(tmp_path):
    """`solution_nll`: the reference solutions' per-token NLL under the weights the step sampled
    with (step 1: the start), and it moves once the weights do."""
    from atrl.rl.solution_nll import solution_nll
    from atrl.tasks.task import Task

    tasks = [Task(id=f"synthetic/t{i}", suite="synthetic", name=f"t{i}", level=1, source=f"X = {i}\n",
                  solution=f"a = {i}\n") for i in range(2)] + [TASKS[2]]  # the last has no solution
    config = tiny_config(tmp_path, steps=2, solution_nll=True, synthetic_saturation=60,
                         agent=dict(max_response_tokens=200, context_budget=1400))
    trainer = Trainer(config, tasks=tasks)
    assert [e.task_id for e in trainer.solution_examples] == ["synthetic/t0", "synthetic/t1"]
    start = solution_nll(trainer.model, trainer.solution_examples, trainer.pad_id, trainer.device, False)
    first, second = trainer.train_step(), trainer.train_step()
    assert first["solution_nll_tasks"] == 2.0
    assert first["solution_nll"] == pytest.approx(sum(start.values()) / 2, rel=1e-6)
    assert first["update_norm"] > 0
    assert second["solution_nll"] != pytest.approx(first["solution_nll"], rel=1e-6)


def test_the_rollouts_kv_caches_are_not_held_through_the_update(tmp_path, monkeypatch):
    """The static engine keeps each shape's cache for its next call; a trainer drops them before
    the update (runs sharing a GPU: a step peaks at the larger phase, not the sum of both)."""
    from atrl.policy.engine_static import StaticCacheEngine

    trainer = Trainer(tiny_config(tmp_path, steps=1, rollout_engine="static"), tasks=TASKS)
    engine = trainer.policy.engine
    assert isinstance(engine, StaticCacheEngine)
    kept_at_update: list[int] = []
    update = trainer.update

    def watched(rows):
        kept_at_update.append(len(engine._states))
        return update(rows)

    monkeypatch.setattr(trainer, "update", watched)
    trainer.train_step()
    assert kept_at_update == [0]
