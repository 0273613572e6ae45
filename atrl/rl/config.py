"""`TrainConfig`: a training run as data (one YAML file plus `--set key=value` overrides).

Every field has a default and a one-line description. Unknown keys and bad values raise
`UsageError` naming the key.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from atrl.errors import UsageError


class TrainConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    # what is trained, on what
    model: str = Field("", description="policy spec passed to atrl.policy.load_policy (an `hf` policy)")
    rollout_engine: str | None = Field(
        None, description="generation engine for rollouts: static, compiled, plain (vllm is refused: it does not follow the trained weights); null: static on a GPU, the policy's own loop on CPU"
    )
    suite: str = Field("builtin", description="task suite to sample training tasks from")
    suite_path: str | None = Field(None, description="suite checkout (kernelbench, npukernelbench)")
    level: int | None = Field(1, description="only tasks of this level (null: all)")
    task_ids: list[str] = Field(
        default_factory=list, description="only these task ids (empty: the whole suite/level); with split: a subset of its part"
    )
    split: str | None = Field(
        None,
        description="train/held-out split file (configs/split-builtin.yaml): tasks of split_part "
        "(still filtered by level), kb examples from its train part only; excludes task_ids",
    )
    split_part: Literal["train", "heldout"] = Field("train", description="the split's part to train on")
    reward: Literal["harness", "synthetic", "key_relay"] = Field(
        "harness", description="reward source: the harness, the synthetic scorer, or the key-relay environment "
        "(atrl.rl.key_relay: also the knowledge hook; kb must be off)"
    )
    key_relay_spread: float = Field(0.5, ge=0.0, description="key relay: spread of the first-attempt noise score")
    key_relay_bonus: float = Field(1.0, gt=0.0, description="key relay: score for reproducing this step's key")
    key_relay_length: int = Field(4, ge=2, description="key relay: letters per key")
    synthetic_targets: str = Field("a", description="synthetic scorer: rewarded characters")
    synthetic_saturation: int = Field(4, ge=1, description="synthetic scorer: target characters for score 1")
    backend: str = Field("auto", description="harness backend: auto | cuda | interpreter")
    harness_workers: int | None = Field(
        None, description="harness worker processes (null: the harness default); on Ray: per judge actor"
    )
    harness_timed_calls: int = Field(
        100, ge=1, description="timed calls per side when the reward times a candidate (fewer: a cheaper, noisier speedup)"
    )
    harness_memory_gib: float | None = Field(
        None, gt=0, description="GPU memory in GiB that the judge admits its jobs against, per device (null: the "
        "device's free memory when judging starts); set it when a trainer shares the GPU: a job "
        "that runs alone then gets this capacity, not the whole device"
    )
    harness_stage_timeouts: dict[Literal["compile", "correctness", "profile"], float] = Field(
        default_factory=dict,
        description="wall-clock limit in seconds per judging stage (empty: the harness defaults); a step waits "
        "for its slowest candidate, so shorter limits bound the step time",
    )
    harness: str = Field(
        "local",
        description="where rewards are judged: local (worker processes of each rank), ray (a judge fleet on the "
        "Ray cluster found here, shared by every rank) or ray://HOST:PORT (a remote Ray cluster)",
    )
    harness_fleet: str = Field("atrl-judges", description="the Ray judge fleet, created when missing")
    harness_actors: int | None = Field(
        None, ge=1, description="judge actors to start when the fleet does not exist (null: one per GPU of the cluster)"
    )
    harness_resource: str | None = Field(
        None, description="custom Ray resource every judge actor needs: judges run only on nodes started with it, "
        "so they never take the trainer's or rollouts' GPUs"
    )
    agent: dict[str, Any] = Field(
        default_factory=dict, description="atrl.agent.AgentConfig fields (turns, budget, ...)"
    )
    kb: bool = Field(
        False, description="knowledge-base text in rollouts (agent.kb must stay on); with split: train examples only"
    )
    kb_tokens: int = Field(600, ge=1, description="token budget of the knowledge-base text per injection")

    # advantages
    estimator: str = Field("atrl", description="advantage estimator: grpo | drgrpo | atrl | atrl_hybrid")
    credit: Literal["trajectory", "segment", "turn"] = Field("segment", description="credit unit for returns")
    gamma: float = Field(1.0, ge=0.0, le=1.0, description="discount over segments (and summary credit)")
    omega: float = Field(1.0, description="atrl_hybrid: weight of the atrl term")
    atrl_scale: Literal["none", "std"] = Field("none", description="atrl: divide by 1 or by the group std")
    adv_eps: float = Field(1e-6, gt=0.0, description="added to standard deviations before dividing")
    mask_truncated: bool = Field(False, description="mask responses cut at the token limit")
    advantage_control: Literal["none", "permute"] = Field(
        "none", description="a control arm: `permute` hands each group's advantages out again at random "
        "among its episodes (updates of the real size that carry no signal)")

    # loss
    clip_low: float = Field(0.2, ge=0.0, description="PPO clip below 1")
    clip_high: float = Field(0.28, ge=0.0, description="PPO clip above 1")
    kl_beta: float = Field(0.0, ge=0.0, description="weight of the k3 KL to the reference policy (0: off)")
    tis_cap: float | None = Field(
        2.0, gt=0.0, description="truncated importance sampling cap C on π_trainer/π_sampler per token (null: off)"
    )

    # optimisation
    lr: float = Field(1e-6, gt=0.0, description="peak learning rate (AdamW)")
    weight_decay: float = Field(0.0, ge=0.0, description="AdamW weight decay")
    betas: tuple[float, float] = Field((0.9, 0.999), description="AdamW betas")
    warmup_steps: int = Field(0, ge=0, description="optimizer steps of linear warm-up")
    schedule: Literal["constant", "linear", "cosine"] = Field("constant", description="decay after warm-up")
    min_lr_ratio: float = Field(0.0, ge=0.0, le=1.0, description="final lr / peak lr for linear and cosine")
    grad_clip: float | None = Field(1.0, description="max global grad norm (null: no clipping)")
    micro_batch_size: int = Field(4, ge=1, description="rows per forward/backward")
    micro_batch_tokens: int | None = Field(None, description="cap on padded tokens per micro-batch")
    ppo_epochs: int = Field(1, ge=1, description="optimizer steps per training step over the same rows")
    bf16: bool = Field(True, description="bf16 autocast for forward passes on GPU")
    fp32_master: bool = Field(
        True,
        description="full fine-tuning trains fp32 master weights (false: AdamW on bf16 weights, only to measure "
        "what that loses)",
    )

    # sampling
    group_size: int = Field(8, ge=1, description="episodes per task per step (G)")
    tasks_per_step: int = Field(4, ge=1, description="tasks sampled per step")
    steps: int = Field(100, ge=1, description="training steps")
    seed: int = Field(0, description="seeds task sampling, generation and initialisation")
    solution_nll: bool = Field(
        False, description="each step, before its update, log `solution_nll`: the mean per-token NLL of the "
        "training tasks' reference solutions as answers to the agent's first prompt (tasks with a solution that "
        "fits the response limit; no sampling, so its change between steps is the policy's)")
    min_multi_segment_fraction: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="warn (run log and metrics) when fewer episodes of a step have ≥ 2 segments (null: no check)",
    )

    # parameters
    lora: bool = Field(False, description="train a LoRA adapter (peft) instead of all weights; when model "
                       "names an adapter (hf:ADAPTER_DIR, smollm2-135m-triton), training continues that "
                       "adapter with its own rank, alpha and targets (lora_r and the rest are then unused)")
    lora_r: int = Field(16, ge=1, description="LoRA rank")
    lora_alpha: int = Field(32, ge=1, description="LoRA alpha")
    lora_dropout: float = Field(0.0, ge=0.0, lt=1.0, description="LoRA dropout")
    lora_target_modules: list[str] | str = Field("all-linear", description="modules that get adapters")

    # outputs
    out_dir: str = Field(
        "runs/train", description="run directory: config, metrics, trajectories, checkpoints"
    )
    save_every: int = Field(10, ge=1, description="checkpoint every this many steps (and at the end)")
    keep_checkpoints: int = Field(2, ge=1, description="checkpoints kept on disk (oldest deleted)")
    keep_every: int | None = Field(
        None, ge=1, description="checkpoints at multiples of this step are never deleted (milestones to evaluate "
        "later; with save_every: 1 a run interrupted anywhere loses at most its step in progress)"
    )
    tensorboard: bool = Field(False, description="also log metrics to TensorBoard (extra: tensorboard)")

    @field_validator("estimator")
    @classmethod
    def _known_estimator(cls, value: str) -> str:
        from atrl.rl.advantages import estimator_names

        if value not in estimator_names():
            raise ValueError(f"unknown estimator {value!r}; choose one of {', '.join(estimator_names())}")
        return value

    @field_validator("harness")
    @classmethod
    def _known_harness(cls, value: str) -> str:
        from atrl.harness.select import parse_harness

        parse_harness(value)  # its ValueError names the choices
        return value

    @field_validator("rollout_engine")
    @classmethod
    def _engine_follows_weights(cls, value: str | None) -> str | None:
        if value == "vllm":
            raise ValueError(
                "the vllm engine holds its own copy of the weights and receives no updates from the trainer, "
                "so training would learn from the initial model's rollouts; use static, compiled or plain"
            )
        return value

    @field_validator("split")
    @classmethod
    def _split_or_task_ids(cls, value: str | None, info: ValidationInfo) -> str | None:
        return value or None  # `--set split=` means no split; task_ids then narrow the split's part

    @field_validator("agent")
    @classmethod
    def _known_agent_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        from atrl.agent.config import AgentConfig

        known = {f.name for f in dataclasses.fields(AgentConfig)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(f"unknown agent key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return value

    def agent_config(self, seed: int | None = None):  # -> AgentConfig
        """The episode settings; `seed` (per step) replaces the configured one."""
        from atrl.agent.config import AgentConfig

        values = dict(self.agent)
        if seed is not None:
            values["seed"] = seed
        return AgentConfig(**values)


def _set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node = data
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise UsageError(f"--set {key}: {part} is not a mapping", "set the whole value instead")
    node[parts[-1]] = value


def parse_yaml(text: str, where: str) -> Any:
    """`text` parsed as YAML; a syntax error becomes one UsageError line naming `where` and the line."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise UsageError(f"{where}: invalid YAML{at}: {problem}", "fix the YAML syntax") from None


def read_yaml_mapping(path: str | Path) -> dict[str, Any]:
    """A config file's YAML mapping; a missing file or a non-mapping is a UsageError naming it."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"config file {path} does not exist", "pass --config pointing at a YAML file")
    loaded = parse_yaml(path.read_text(), str(path)) or {}
    if not isinstance(loaded, dict):
        raise UsageError(f"{path}: the config must be a YAML mapping", "write key: value lines")
    return loaded


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """`["lr=1e-5", "agent.max_turns=4"]` → nested dict; values are parsed as YAML scalars."""
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise UsageError(f"--set {pair!r} is not key=value", "write e.g. --set lr=1e-5")
        key, raw = pair.split("=", 1)
        value = parse_yaml(raw, f"--set {pair}") if raw.strip() else ""
        _set_dotted(out, key.strip(), _number_or_text(value))
    return out


def _number_or_text(value: Any) -> Any:
    """YAML 1.1 reads `1e-5` as text; on the command line it means a number."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def make_config(data: dict[str, Any]) -> TrainConfig:
    """Validate a mapping into a `TrainConfig`; errors name the offending key."""
    try:
        return TrainConfig(**data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "config"
        raise UsageError(
            f"config key {key!r}: {first['msg']}", "fix the value in the YAML file or --set"
        ) from None


def load_config(path: str | Path | None, overrides: list[str] | None = None, **fields: Any) -> TrainConfig:
    """Read a YAML config, apply `key=value` overrides then explicit `fields` (e.g. out_dir)."""
    data = read_yaml_mapping(path) if path is not None else {}
    data = _merge(data, parse_overrides(overrides or []))
    data = _merge(data, {k: v for k, v in fields.items() if v is not None})
    return make_config(data)


def save_config(config: TrainConfig, path: str | Path) -> None:
    Path(path).write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))
