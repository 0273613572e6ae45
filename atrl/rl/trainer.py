"""The training loop: sample tasks → run G episodes per task → advantages → rows → PPO update.

One step, read top to bottom in `Trainer.train_step`:
1. sample `tasks_per_step` tasks (seeded by seed and step, so a resumed run samples the same);
2. run `group_size` episodes per task through the agent (`run_episodes`), judged by the reward
   source (the harness, or the synthetic scorer in tests);
3. build rows (one per segment) with the configured estimator and credit; groups without signal
   are dropped;
4. recompute old log-probs with the trainer's own forward under the current weights (the PPO
   ratio's denominator; with one epoch, the update's own forward, detached), keep the sampler's
   for the mismatch metrics and truncated importance sampling, and reference log-probs when KL
   is on;
5. `ppo_epochs` optimizer steps over all rows: micro-batched forward/backward with the loss
   normalised by the step's trainable-token count, gradient clipping, AdamW, LR schedule; then
   the policy's sampling weights are refreshed from the fp32 master weights (`atrl.rl.chassis`);
6. append metrics (what moved: update norm, changed fraction, mismatch, clip, segments, summaries),
   save the step's trajectories, checkpoint every `save_every` steps.

Launched by `accelerate launch` with W processes, rank r runs tasks r, r+W, … of step 1–3 and
its own rows in 4–5 (the token count and the micro-batch count agreed over all ranks, see
`atrl.rl.distributed`); rank 0 writes metrics, trajectories and checkpoints for the whole step.

The model stays in eval mode throughout (no dropout), so the first epoch's ratios are exactly 1.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import statistics
import sys
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch

from atrl.agent.records import Trajectory
from atrl.errors import UsageError
from atrl.harness.feedback.failures import JUDGE_SIDE_CLASSES
from atrl.jsonio import Journal
from atrl.rl.advantages import AdvantageOptions
from atrl.rl.chassis import Chassis, LoraSettings, OptimSettings, adapter_base_spec
from atrl.rl.checkpoint import is_peft, latest_checkpoint, load_optimizer_state
from atrl.rl.config import TrainConfig, save_config
from atrl.rl.distributed import data_parallel, interleave
from atrl.rl.gpu_peaks import GpuPeaks
from atrl.rl.key_relay import KeyRelay, relay_metrics
from atrl.rl.loss import LossStats
from atrl.rl.metrics import MetricsLog, compaction_warning, mismatch_metrics, rollout_metrics, row_metrics
from atrl.rl.reward_source import RewardSource, SyntheticScorer
from atrl.rl.rows import Row, build_rows
from atrl.rl.split import Split
from atrl.rl.update import LossConfig, accumulate_gradients, micro_batch_count, row_logprobs
from atrl.tasks.task import Task


def optim_settings(config: TrainConfig) -> OptimSettings:
    """AdamW and the LR schedule over the run's `steps × ppo_epochs` optimizer steps."""
    return OptimSettings(lr=config.lr, total_steps=config.steps * config.ppo_epochs, betas=config.betas,
                         weight_decay=config.weight_decay, warmup_steps=config.warmup_steps,
                         schedule=config.schedule, min_lr_ratio=config.min_lr_ratio)


def lora_settings(config: TrainConfig) -> LoraSettings | None:
    if not config.lora:
        return None
    return LoraSettings(config.lora_r, config.lora_alpha, config.lora_dropout, config.lora_target_modules)


class _TimedPolicy:
    """The policy, with the seconds spent in `generate` counted (the generation phase)."""

    def __init__(self, policy: Any) -> None:
        self._policy = policy
        self.seconds = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._policy, name)

    def generate(self, requests, params):  # noqa: ANN001 - the Policy interface
        start = time.perf_counter()
        try:
            return self._policy.generate(requests, params)
        finally:
            self.seconds += time.perf_counter() - start


def _read_split(config: TrainConfig) -> Split:
    """The config's split file, read and checked against the suite (UsageError naming the file)."""
    from atrl.rl.split import read_split, validate_split
    from atrl.tasks.registry import load_suite

    assert config.split is not None
    split = read_split(config.split)
    if split.suite != config.suite:
        raise UsageError(
            f"split file {config.split} splits suite {split.suite!r}, the config trains on suite {config.suite!r}",
            f"set suite: {split.suite}, or pass a split file of suite {config.suite!r}",
        )
    validate_split(split, load_suite(config.suite, config.suite_path).tasks, config.split)
    return split


def _split_tasks(config: TrainConfig) -> list[Task]:
    """The tasks of the split's `split_part`, in file order, of `level` when it is set."""
    from atrl.rl.split import split_tasks
    from atrl.tasks.registry import load_suite

    split = _read_split(config)
    tasks = split_tasks(split, config.split_part, load_suite(config.suite, config.suite_path).tasks)
    if config.level is not None:
        tasks = [t for t in tasks if t.level == config.level]
    tasks = [t for t in tasks if "skipped" not in t.flags]
    if config.task_ids:  # e.g. the tasks `atrl tasks screen` kept
        outside = set(config.task_ids) - {t.id for t in tasks}
        if outside:
            raise UsageError(
                f"config key 'task_ids': {', '.join(sorted(outside))} not among the runnable level-{config.level} "
                f"tasks of the {config.split_part} part of {config.split}",
                "list only tasks of that part (see the split file), or drop split to train on any task",
            )
        tasks = [t for t in tasks if t.id in set(config.task_ids)]
    if not tasks:
        raise UsageError(
            f"the {config.split_part} part of {config.split} has no runnable task of level {config.level}",
            "set level=null (all levels) or another level",
        )
    return tasks


def load_tasks(config: TrainConfig) -> list[Task]:
    """The tasks a run trains on: the split's `split_part` when a split is set, else the suite at
    `level` (narrowed by `task_ids`), without skipped tasks."""
    from atrl.tasks.registry import load_suite

    if config.split:
        return _split_tasks(config)
    tasks = load_suite(config.suite, config.suite_path, config.level).tasks
    if config.task_ids:
        wanted = set(config.task_ids)
        tasks = [t for t in tasks if t.id in wanted]
        missing = wanted - {t.id for t in tasks}
        if missing:
            raise UsageError(
                f"config key 'task_ids': unknown task(s) {', '.join(sorted(missing))}",
                "see `atrl tasks list`",
            )
    tasks = [t for t in tasks if "skipped" not in t.flags]
    if not tasks:
        raise UsageError(
            f"no tasks in suite {config.suite!r} level {config.level}", "change suite, level or task_ids"
        )
    return tasks


def _load_policy(spec: str, out: Path, engine: str | None = None, lora: bool = False) -> Any:
    """`tiny-random[:SEED]`: a tiny random chat model built in code (CPU tests, CI); anything
    else goes to `atrl.policy.load_policy`. With `lora`, a spec that names an adapter loads it
    unmerged and trainable, so that training continues it."""
    if spec == "tiny-random" or spec.startswith("tiny-random:"):
        from atrl.policy.hf import HFPolicy
        from atrl.rl.tiny import build_tiny_model

        seed = int(spec.split(":", 1)[1]) if ":" in spec else 0
        directory = out / "tiny-model"
        if not (directory / "config.json").exists():
            build_tiny_model(directory, seed)
        return HFPolicy(directory, name=spec, engine=engine)
    if not spec:
        raise UsageError(
            "config key 'model' is empty", "set model to a policy spec, e.g. hf:DIR or tiny-random"
        )
    from atrl.policy import load_policy
    from atrl.policy.adapters import start_adapter

    options: dict[str, Any] = {"engine": engine} if engine else {}
    if lora and start_adapter(spec) is not None:
        options["adapter_trainable"] = True
    return load_policy(spec, **options)


def _make_knowledge(config: TrainConfig, policy: Any, train_ids: list[str] | None) -> Any | None:
    """The rollouts' knowledge-base injector (None when `kb` is off). With a split (`train_ids`:
    its training tasks), only their solutions may appear as examples: held-out ones never do."""
    if not config.kb:
        return None
    from atrl.kb.inject import KnowledgeInjector

    return KnowledgeInjector(
        config.agent_config().platform,
        budget_tokens=config.kb_tokens,
        count_tokens=lambda text: len(policy.tokenize(text)),
        allow_example_tasks=train_ids,
    )


def _check_knowledge(config: TrainConfig, knowledge: Any, train_ids: list[str] | None) -> None:
    """A given injector must not show held-out examples when the config names a split."""
    if knowledge is None or train_ids is None or not hasattr(knowledge, "allow_example_tasks"):
        return
    allowed = knowledge.allow_example_tasks
    if allowed is None or not set(allowed) <= set(train_ids):
        raise UsageError(
            f"the knowledge injector may show examples of tasks outside the train part of {config.split}",
            "build it with allow_example_tasks = the split's train ids (or let the trainer build it: kb=true)",
        )


def _make_reward_source(config: TrainConfig) -> RewardSource:
    if config.reward == "synthetic":
        return SyntheticScorer(config.synthetic_targets, config.synthetic_saturation)
    if config.reward == "key_relay":
        if config.kb:
            raise UsageError("reward key_relay is its own knowledge hook: it cannot run beside the knowledge base",
                             "set kb: false")
        if not config.agent_config().kb:
            raise UsageError("reward key_relay shows its keys through the agent's knowledge text, which agent.kb=false turns off",
                             "set agent.kb: true (the default)")
        return KeyRelay(config.key_relay_spread, config.key_relay_bonus, config.key_relay_length, config.seed)
    import os

    from atrl.harness.select import gib_bytes, make_harness

    # a data-parallel rank judges locally on its own GPU (torchrun/accelerate set LOCAL_RANK); on
    # Ray every rank sends its candidates to the one fleet
    local_rank = os.environ.get("LOCAL_RANK") if int(os.environ.get("WORLD_SIZE", "1")) > 1 else None
    gpus = (int(local_rank),) if local_rank is not None else None
    return make_harness(config.harness, fleet=config.harness_fleet, fleet_actors=config.harness_actors,
                        fleet_resource=config.harness_resource, gpus=gpus, backend=config.backend,
                        workers=config.harness_workers, timed_calls=config.harness_timed_calls,
                        stage_timeouts=dict(config.harness_stage_timeouts) or None,
                        memory_capacity=gib_bytes(config.harness_memory_gib), preset=config.agent.get("preset"))


def draw_tasks(tasks: Sequence[Task], k: int, seed: int, step: int) -> list[Task]:
    """The tasks of (0-based) `step`: k of them without replacement (with, when there are fewer),
    from a generator seeded by seed and step, so a resumed run, and anyone reading its records
    (`benchmarks/rl_run_summary.py`), draws the same."""
    rng = random.Random(f"{seed}:{step}")
    if k <= len(tasks):
        return rng.sample(list(tasks), k)
    return [rng.choice(tasks) for _ in range(k)]


def prompt_preset(config: TrainConfig, reward_source: object) -> str | None:
    """The size preset the task message shows: the agent's, else the one the judging harness
    runs (None: the agent's own default; rewards other than the harness judge no sizes)."""
    if config.agent.get("preset") is not None or config.reward != "harness":
        return config.agent.get("preset")
    return getattr(reward_source, "preset", None) or "full"  # a backend's None: the tasks as written


class Trainer:
    """Trains `policy.model` in place. `policy` must expose `.model` (a causal LM) and
    `.tokenizer` (or None) besides the `Policy` interface; by default it is
    `load_policy(config.model)`. `tasks` and `reward_source` default to the configured suite and
    reward. Resumes from the newest checkpoint in `config.out_dir` when there is one."""

    def __init__(
        self,
        config: TrainConfig,
        policy: Any | None = None,
        reward_source: RewardSource | None = None,
        tasks: list[Task] | None = None,
        knowledge: Any | None = None,
    ) -> None:
        self.config = config
        self.dp = data_parallel()
        if config.tasks_per_step % self.dp.world_size:
            raise UsageError(
                f"tasks_per_step {config.tasks_per_step} does not split over {self.dp.world_size} processes",
                "make tasks_per_step a multiple of the number of processes",
            )
        self.out = Path(config.out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        random.seed(config.seed)
        torch.manual_seed(config.seed)
        if policy is None:
            with self.dp.main_first():  # rank 0 writes the tiny model the others then read
                policy = _load_policy(config.model, self.out, config.rollout_engine, config.lora)
        if not hasattr(policy, "model"):
            raise UsageError(f"policy {policy.name} has no model to train", "train with an `hf` policy")
        engine = getattr(policy, "engine", None)
        if engine is not None and not getattr(engine, "follows_model_weights", True):
            raise UsageError(
                f"policy {policy.name} generates with the {getattr(engine, 'name', '?')} engine, which does not "
                "receive the trained weights: training would learn from the initial model's rollouts",
                "set rollout_engine to static, compiled or plain",
            )
        self.policy = policy
        continues_adapter = config.lora and is_peft(policy.model)
        self.chassis = Chassis(policy.model, optim_settings(config), lora_settings(config), config.fp32_master)
        self.model: torch.nn.Module = self.chassis.model  # the trained (fp32) module
        policy.model = self.chassis.generation_model  # the weights the policy samples with
        self.model.eval()
        self.device = next(self.model.parameters()).device
        tokenizer = getattr(policy, "tokenizer", None)
        pad = getattr(tokenizer, "pad_token_id", None)
        self.pad_id = pad if pad is not None else (getattr(tokenizer, "eos_token_id", None) or 0)
        self.tasks = tasks if tasks is not None else load_tasks(config)
        self.reward_source = reward_source if reward_source is not None else _make_reward_source(config)
        self.prompt_preset = prompt_preset(config, self.reward_source)
        train_ids = _read_split(config).ids("train") if config.split else None
        if knowledge is None:
            knowledge = (self.reward_source if isinstance(self.reward_source, KeyRelay)
                         else _make_knowledge(config, policy, train_ids))
        _check_knowledge(config, knowledge, train_ids)
        self.knowledge = knowledge
        temperature = config.agent_config().temperature
        self.loss_config = LossConfig(config.clip_low, config.clip_high, config.kl_beta, temperature or 1.0,
                                      config.tis_cap)
        # the KL's reference is the start policy: with a fresh LoRA adapter that is the base (the
        # adapter switched off); a continued adapter is part of the start, so it is copied frozen
        self.ref_model = None
        if config.kl_beta > 0 and (not config.lora or continues_adapter):
            self.ref_model = copy.deepcopy(self.chassis.generation_model).requires_grad_(False)
        self.solution_examples = []
        if config.solution_nll:
            from atrl.rl.solution_nll import solution_nll_examples

            self.solution_examples = solution_nll_examples(
                policy, self.tasks, dict(config.agent), config.agent_config().platform, self.prompt_preset,
                self.knowledge if config.agent_config().kb else None)
            if not self.solution_examples:
                print("warning: solution_nll is on, but no training task has a reference solution that fits "
                      "agent.max_response_tokens: nothing to measure", file=sys.stderr)
        self.optimizer = self.chassis.optimizer
        self.scheduler = self.chassis.scheduler
        self.step = 0
        checkpoint = latest_checkpoint(self.out)
        if checkpoint is not None:  # FSDP: the weights now, the optimizer's shards once it is sharded
            self.step = self.chassis.resume(self.out, with_optimizer=not self.dp.is_fsdp)
        # DDP/FSDP around the model for the update; `self.model` stays the module that is trained
        self.train_model, self.optimizer = self.dp.prepare(self.model, self.optimizer)
        if checkpoint is not None and self.dp.is_fsdp:
            load_optimizer_state(checkpoint, self.train_model, self.optimizer)
        if self.dp.is_main:
            save_config(config, self.out / "config.yaml")
        self.metrics = MetricsLog(self.out, config.tensorboard, resume_step=self.step, write=self.dp.is_main)

    # -- the loop ------------------------------------------------------------------------------
    def run(self) -> list[dict]:
        """Train until `config.steps`; returns this call's metric records."""
        records = []
        try:
            while self.step < self.config.steps:
                records.append(self.train_step())
        finally:
            self.metrics.close()
        return records

    def sample_tasks(self, step: int) -> list[Task]:
        return draw_tasks(self.tasks, self.config.tasks_per_step, self.config.seed, step)

    def rollout(self, step: int) -> tuple[list[Trajectory], float]:
        """G episodes per task of this rank's share (task-major order) and the seconds spent
        generating. Ranks sample with different seeds: same seeds would correlate their episodes."""
        from atrl.agent.episode import run_episodes

        timed = _TimedPolicy(self.policy)
        if isinstance(self.reward_source, KeyRelay):
            self.reward_source.begin_step(step)  # this step's keys
        seed = self.config.seed * 100_000 + step * 1_000 + self.dp.rank * 10_000_000
        agent_config = self.config.agent_config(seed=seed)
        if self.prompt_preset is not None:
            agent_config = dataclasses.replace(agent_config, preset=self.prompt_preset)
        self.model.eval()
        # the policy samples with the trained module itself unless it has its own copy (master weights)
        gather = self.dp.full_params(self.train_model) if not self.chassis.separate_master else nullcontext()
        with torch.no_grad(), gather:
            trajectories = run_episodes(
                timed,
                self.reward_source,
                self.dp.shard(self.sample_tasks(step)),
                self.config.group_size,
                agent_config,
                self.knowledge,
            )
        return trajectories, timed.seconds

    def rows_for(self, trajectories: list[Trajectory]) -> tuple[list[Row], int]:
        g = self.config.group_size
        groups = [trajectories[i : i + g] for i in range(0, len(trajectories), g)]
        # a group with a verdict about the judge's device (not its candidate) would learn from noise
        groups = [group for group in groups if not any(
            (turn.verdict or {}).get("error_class") in JUDGE_SIDE_CLASSES for traj in group for turn in traj.turns)]
        cfg = self.config
        options = AdvantageOptions(eps=cfg.adv_eps, atrl_scale=cfg.atrl_scale, omega=cfg.omega)
        permute = random.Random(f"permute:{cfg.seed}:{self.step}:{self.dp.rank}") \
            if cfg.advantage_control == "permute" else None
        rows = build_rows(groups, cfg.estimator, cfg.credit, cfg.gamma, options, cfg.mask_truncated, permute)
        world, rank = self.dp.world_size, self.dp.rank
        for row in rows:  # this rank's group k is the step's group k·W + rank
            group, sample = divmod(row.trajectory_id, g)
            row.group_id = row.group_id * world + rank
            row.trajectory_id = (group * world + rank) * g + sample
        return rows, len(groups)

    def _score_rows(self, rows: list[Row]) -> None:
        """Old log-probs under the current weights (a forward of their own when more than one
        epoch reuses them; with one, the update's forward gives them); reference log-probs when
        KL is on."""
        cfg = self.config
        if cfg.ppo_epochs == 1 and cfg.kl_beta <= 0:
            return
        kwargs = dict(
            pad_id=self.pad_id,
            temperature=self.loss_config.temperature,
            micro_batch_size=cfg.micro_batch_size,
            max_tokens=cfg.micro_batch_tokens,
            device=self.device,
            autocast=cfg.bf16,
        )
        with self.dp.full_params(self.train_model):
            if cfg.ppo_epochs > 1:
                for row, lps in zip(rows, row_logprobs(self.model, rows, **kwargs), strict=True):
                    row.old_logprobs = lps
            if cfg.kl_beta > 0:
                if self.ref_model is not None:
                    refs = row_logprobs(self.ref_model, rows, **kwargs)
                else:
                    with self.model.disable_adapter():
                        refs = row_logprobs(self.model, rows, **kwargs)
                for row, lps in zip(rows, refs, strict=True):
                    row.ref_logprobs = lps

    def _solution_nll(self) -> dict[str, float]:
        """`solution_nll` (mean over tasks of the per-token NLL of their reference solutions) under
        the weights the step's episodes were sampled with; {} when off or nothing to measure."""
        if not self.solution_examples:
            return {}
        from atrl.rl.solution_nll import solution_nll

        with self.dp.full_params(self.train_model):
            per_task = solution_nll(self.model, self.solution_examples, self.pad_id, self.device, self.config.bf16)
        return {"solution_nll": statistics.fmean(per_task.values()), "solution_nll_tasks": float(len(per_task))}

    def update(self, rows: list[Row]) -> tuple[LossStats, float, dict[str, float]]:
        """`ppo_epochs` optimizer steps over the rows (this rank's; the step's when alone), then
        the policy's sampling weights refreshed; returns the last epoch's stats (summed over
        ranks), its grad norm, and what the update changed (`UpdateProbe`, rank 0's view)."""
        cfg = self.config
        self._score_rows(rows)
        total = int(self.dp.sum([sum(r.num_trainable for r in rows)])[0])
        batches = int(self.dp.max([micro_batch_count(rows, cfg.micro_batch_size, cfg.micro_batch_tokens)])[0])
        stats, grad_norm = LossStats(), 0.0
        probe = self.chassis.probe()
        for _ in range(cfg.ppo_epochs):
            self.optimizer.zero_grad(set_to_none=True)
            stats = accumulate_gradients(
                self.train_model,
                rows,
                self.loss_config,
                self.pad_id,
                cfg.micro_batch_size,
                cfg.micro_batch_tokens,
                total,
                self.device,
                cfg.bf16,
                loss_scale=float(self.dp.world_size),
                min_micro_batches=batches,
                no_sync=lambda skip: self.dp.no_sync(self.train_model, skip),
                old_from_current=cfg.ppo_epochs == 1,
            )
            grad_norm = self.dp.clip_grad_norm(self.train_model, cfg.grad_clip if cfg.grad_clip else float("inf"))
            self.optimizer.step()
            self.scheduler.step()
        with self.dp.full_params(self.train_model):
            self.chassis.sync_policy()
        moved = probe.measure()
        fields = list(LossStats.__dataclass_fields__)
        summed = self.dp.sum([getattr(stats, f) for f in fields])
        return LossStats(**dict(zip(fields, summed, strict=True))), grad_norm, moved

    def train_step(self) -> dict:
        step = self.step
        started = time.perf_counter()
        peaks = GpuPeaks(self.device)
        peaks.start()
        lr = self.optimizer.param_groups[0]["lr"]
        trajectories, generation_s = self.rollout(step)
        rollout_s = time.perf_counter() - started
        peaks.end("rollout")
        self._release_generation_memory()
        rows, _ = self.rows_for(trajectories)
        # the whole step's episodes and rows, for metrics and the trajectory file (rank 0)
        step_trajectories = interleave(self.dp.gather(trajectories), self.config.group_size)
        if step_trajectories and not any(
            lp is not None for traj in step_trajectories for seg in traj.segments for lp in seg.logprobs
        ):
            raise UsageError(f"policy {self.policy.name} returned no log-probs", "train with an `hf` policy")
        step_rows = [row for rank_rows in self.dp.gather(rows) for row in rank_rows]
        if self.dp.is_main:
            self._save_trajectories(step + 1, step_trajectories)
        known = self._solution_nll()
        update_started = time.perf_counter()
        moved = {"update_norm": 0.0, "update_rel_norm": 0.0, "update_fraction_changed": 0.0,
                 "policy_fraction_changed": 0.0}
        if step_rows:
            stats, grad_norm, moved = self.update(rows)
        else:  # no group carried signal: nothing to learn from, the schedule still advances
            stats, grad_norm = LossStats(), 0.0
            for _ in range(self.config.ppo_epochs):
                self.scheduler.step()
        update_s = time.perf_counter() - update_started
        peaks.end("update")
        self.step = step + 1
        record: dict[str, Any] = {"step": self.step, "lr": lr}
        record |= rollout_metrics(step_trajectories)
        record |= row_metrics(step_rows, len(step_trajectories) // self.config.group_size)
        record |= mismatch_metrics(step_rows)
        if isinstance(self.reward_source, KeyRelay):
            record |= relay_metrics(self.reward_source, step_trajectories)
        record |= stats.means()
        record |= known
        record["grad_norm"] = grad_norm
        record |= moved
        warning = compaction_warning(record, self.config.min_multi_segment_fraction)
        record["compaction_warning"] = warning is not None
        if warning is not None and self.dp.is_main:
            print(f"warning: step {self.step}: {warning}", file=sys.stderr)
        record |= {
            "time_generation_s": generation_s,
            "time_evaluation_s": max(0.0, rollout_s - generation_s),
            "time_update_s": update_s,
            "time_step_s": time.perf_counter() - started,
            "generation_tokens_per_s": record["tokens_generated"] / generation_s if generation_s > 0 else 0.0,
        }
        record |= peaks.record()  # what decides how many runs share one GPU
        self.metrics.append(record)
        if self.step % self.config.save_every == 0 or self.step == self.config.steps:
            self._checkpoint()
        return record

    def _release_generation_memory(self) -> None:
        """The rollout's kept KV caches (by SmolLM2's dimensions about 8 GiB a shape at 64 episodes ×
        5,600 tokens) are not held through the update, so a step peaks at the larger phase rather
        than their sum, and their blocks go back to the GPU for the other runs on it. The engine
        captures its graphs again in the next rollout; that cost shows in `time_generation_s`."""
        release = getattr(self.policy, "release_generation_memory", None)
        if release is not None:
            release()
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    def _checkpoint(self) -> None:
        weights = self.dp.state_dict(self.train_model)  # collectives under FSDP
        optimizer_state = self.dp.optimizer_state(self.train_model, self.optimizer)
        if self.dp.is_main:
            self.chassis.save(self.out, self.step, getattr(self.policy, "tokenizer", None),
                              self.config.keep_checkpoints, base_spec=adapter_base_spec(self.config.model, self.out) if self.config.model else None,
                              state_dict=weights, optimizer_state=optimizer_state, keep_every=self.config.keep_every)
        self.dp.wait()

    def _save_trajectories(self, step: int, trajectories: list[Trajectory]) -> None:
        path = self.out / "trajectories" / f"step_{step:04d}.jsonl"
        path.unlink(missing_ok=True)  # a resumed run rewrites the step it redoes
        with Journal(path) as journal:
            for traj in trajectories:
                journal.append(traj)
