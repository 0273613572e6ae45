"""The configuration of an eval run: every field has its one default, its allowed range and a
one-line help; `atrl eval`'s flags are generated from these fields (see `atrl.cli.eval`).

A run is described by an optional YAML file of these keys, `--set key=value` overrides and the
command line's flags, in that order of precedence (`load_eval_config`). Saved as `config.yaml`
in the run directory; re-running with the same `--out` resumes only when the result-defining
fields match (a different policy or task set would mix two runs).
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any, ClassVar, Literal

import annotated_types as at
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from atrl.agent.config import AgentConfig
from atrl.errors import UsageError

# The main job of the README: four held-out level-1 activations (configs/split-builtin.yaml), none
# of them in the default adapter's training data, small enough for a 2-core CPU.
DEFAULT_TASKS = ["builtin/sigmoid", "builtin/tanh", "builtin/elu", "builtin/hardswish"]

# The agent's own defaults where an eval keeps them. The values an eval sets differently are
# written out below (max_turns, max_segments, context_budget, max_response_tokens, temperature,
# top_p, seed): the main job must finish in minutes on a CPU, so it takes fewer and shorter
# turns than `AgentConfig`'s training-sized defaults, and samples a little colder, seeded.
_AGENT = AgentConfig()


class Conflict(ValueError):
    """Values that are each allowed but not together; `fix` says what to change."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.problem, self.fix = problem, fix


def _flag(name: str, text: str, **limits: Any) -> dict[str, Any]:
    """Field arguments of a key that is also the command-line flag `name`."""
    return {"description": text, "json_schema_extra": {"flag": name}, **limits}


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built on first use: `atrl check` never pays

    # which tasks
    suite: Literal["builtin", "kernelbench", "npukernelbench"] = Field(
        "builtin", **_flag("--suite", "Task suite."))
    path: str | None = Field(None, **_flag("--path", "Checkout directory for the kernelbench/npukernelbench suites."))
    level: int | None = Field(None, **_flag("--level", "Only tasks of this level.", ge=1))
    tasks: list[str] = Field(default_factory=list, **_flag(
        "--tasks", "Task ids or builtin names, comma-separated (default: a few builtin level-1 tasks)."))
    limit: int | None = Field(None, **_flag("--limit", "At most this many tasks (after sorting by id).", ge=1))
    split: str | None = Field(None, **_flag(
        "--split", "A train/held-out split file: tasks of --split-part, kb examples from train only."))
    split_part: Literal["train", "heldout"] = Field("heldout", **_flag("--split-part", "The split's part to evaluate."))
    with_solution: bool = Field(False, **_flag("--with-solution", "Only tasks with a reference solution."))

    # who writes the kernels
    policy: str = Field("smollm2-135m-triton", **_flag(
        "--policy", "smollm2-135m-triton (the default model with its shipped adapter) | smollm2-135m | hf:PATH | "
        "openai:MODEL@URL | replay:FILE | reference."))
    engine: Literal["static", "compiled", "plain", "vllm"] | None = Field(None, **_flag(
        "--engine", "Generation engine of an hf policy (default: static on a GPU, the policy's own loop on CPU)."))
    samples: int = Field(1, **_flag("--samples", "Episodes per task.", ge=1))
    generation_batch: int | None = Field(None, ge=1, description=(
        "Sequences an hf policy decodes at once (default: every running episode's turn together); lower it "
        "where the GPU is shared, since each sequence's KV cache is held for the whole turn."))

    # the agent (see atrl.agent.AgentConfig)
    max_turns: int = Field(2, **_flag("--max-turns", "Turns (judged responses) per episode.", ge=1))
    turns_per_segment: int = Field(_AGENT.turns_per_segment, **_flag(
        "--turns-per-segment", "Compact after this many turns in one segment.", ge=1))
    max_segments: int = Field(8, ge=1, description="Segments per episode: it ends instead of compacting past them.")
    context_budget: int = Field(4096, **_flag(
        "--context-budget", "Context window in the policy's tokens (prompt + response).", ge=1))
    max_response_tokens: int = Field(512, **_flag("--max-response-tokens", "Tokens per response.", ge=1))
    summary_tokens: int = Field(_AGENT.summary_tokens, ge=1, description="Tokens per compaction summary.")
    target_score: float | None = Field(None, ge=0.0, description=(
        "Stop an episode once a turn reaches this score (default: at the first correct turn on an untimed "
        "backend, where nothing scores higher; never early on a timed one)."))
    temperature: float = Field(0.7, **_flag("--temperature", "Sampling temperature (0 = greedy).", ge=0.0))
    top_p: float = Field(0.95, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    seed: int = Field(0, **_flag("--seed", "Sampling seed.", ge=0))
    kb: bool = Field(_AGENT.kb, **_flag("--kb", "Inject knowledge-base entries into the prompts."))
    kb_tokens: int = Field(600, ge=1, description="Token budget of the knowledge-base text per injection.")

    # the harness
    backend: Literal["auto", "cuda", "interpreter", "ascend"] = Field("auto", **_flag(
        "--backend", "Harness backend (auto: cuda on a GPU, else interpreter; ascend for npukernelbench)."))
    preset: str | None = Field(None, **_flag(
        "--preset", "Task size preset (default: the backend's, small on the interpreter)."))
    trials: int = Field(5, **_flag("--trials", "Correctness trials per evaluation (+2 on wide-range inputs).", ge=1))
    timed_calls: int = Field(100, ge=1, description="Timed calls per side on a timed backend.")
    workers: int | None = Field(None, ge=1, description="Harness worker processes (default: per backend); on "
                                "Ray: per judge actor.")
    memory_gib: float | None = Field(None, gt=0, description="GPU memory in GiB that the judge admits its jobs "
                                     "against, per device (default: the device's free memory when judging "
                                     "starts); set it when a trainer shares the GPU: a job that runs alone then "
                                     "gets this capacity, not the whole device.")
    use_cache: bool = Field(True, **_flag("--cache", "Reuse cached verdicts of identical candidates."))
    harness: str = Field("local", **_flag(
        "--harness", "Where candidates are judged: local (worker processes here), ray (a judge fleet on the Ray "
        "cluster found here, else a local one) or ray://HOST:PORT (a remote Ray cluster)."))
    fleet: str = Field("atrl-judges", description="The Ray judge fleet to use, created when missing (shared by every "
                       "run naming it).")
    fleet_actors: int | None = Field(None, ge=1, description="Judge actors to start when the fleet does not exist "
                                     "(default: one per GPU of the cluster; per 2 CPUs on the interpreter).")
    fleet_resource: str | None = Field(None, description="A custom Ray resource every judge actor needs one unit of: "
                                       "judges run only on the nodes started with it.")

    # fields that define the results: a resumed run must match them
    RESULT_FIELDS: ClassVar[tuple[str, ...]] = (
        "suite", "level", "tasks", "limit", "split", "split_part", "with_solution", "policy", "samples", "max_turns",
        "turns_per_segment", "max_segments", "context_budget", "max_response_tokens", "summary_tokens",
        "temperature", "top_p", "seed", "kb", "backend", "preset", "trials", "generation_batch",
    )

    # where each field's value came from ("flag", "--set" or a config file's path); absent: the default
    _origins: dict[str, str] = PrivateAttr(default_factory=dict)

    @field_validator("tasks", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [t.strip() for t in value.split(",") if t.strip()]
        return value

    @field_validator("harness")
    @classmethod
    def _known_harness(cls, value: str) -> str:
        from atrl.harness.select import HARNESS_CHOICES, parse_harness

        try:
            parse_harness(value)
        except ValueError as exc:
            raise Conflict(str(exc), f"choose {HARNESS_CHOICES}") from None
        return value

    @field_validator("path", "split", mode="before")
    @classmethod
    def _path_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, Path) else value

    @model_validator(mode="after")
    def _consistent(self) -> EvalConfig:
        if self.max_response_tokens >= self.context_budget:
            raise Conflict(f"--max-response-tokens {self.max_response_tokens} leaves no room for the prompt in "
                           f"--context-budget {self.context_budget}",
                           "raise --context-budget above --max-response-tokens, or lower --max-response-tokens")
        if self.split and self.tasks:
            raise Conflict("--split and --tasks both select the tasks", "keep one of them")
        if self.suite != "builtin" and not self.path:
            raise Conflict(f"--suite {self.suite} needs --path", "pass --path DIR, the suite's checkout directory")
        return self

    # ---- names and records --------------------------------------------------------------------
    @classmethod
    def flag(cls, name: str) -> str | None:
        """The command-line flag of field `name` ("--max-turns"), or None for a config-file key."""
        extra = cls.model_fields[name].json_schema_extra
        return extra.get("flag") if isinstance(extra, dict) else None

    @classmethod
    def as_option(cls, name: str, value: Any) -> str:
        """`value` of field `name` as the user would write it: `--max-turns 3`, `--no-kb`, `top_p: 0.9`."""
        flag = cls.flag(name)
        if flag is None:
            return f"{name}: {'null' if value is None else value}"
        if isinstance(value, bool):
            if cls.model_fields[name].default is True:  # an on/off pair: --kb / --no-kb
                return flag if value else f"--no-{flag[2:]}"
            return flag if value else f"no {flag}"
        if value is None or value == []:
            return f"no {flag}"
        return f"{flag} {','.join(value) if isinstance(value, list) else value}"

    def name_of(self, name: str) -> str:
        """How the user set field `name`: its flag, `--set name`, or the key in a config file."""
        return option_label(name, self._origins)

    def to_dict(self) -> dict:
        return self.model_dump()

    @classmethod
    def from_dict(cls, data: dict) -> EvalConfig:
        return make_eval_config(data, dict.fromkeys(data, "a saved config"))

    def check_resumable(self, saved: dict, out: str | Path | None = None) -> None:
        """Raise UsageError when `saved` (the config of the run already in `out`) differs in a
        result-defining field; the message says how to resume it and how to start fresh."""
        diffs = [k for k in self.RESULT_FIELDS if k in saved and saved[k] != getattr(self, k)]
        if not diffs:
            return
        where = str(out) if out is not None else "the --out directory"
        changed = ", ".join(f"{self.as_option(k, saved[k])} → {self.as_option(k, getattr(self, k))}" for k in diffs)
        same = " ".join(self.as_option(k, saved[k]) for k in diffs)
        raise UsageError(
            f"{where} holds a run with another configuration ({changed})",
            f"to resume it, run with its options ({same}); to start fresh, pass another --out or remove {where}",
        )

    def dump(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)


def make_eval_config(data: dict[str, Any], origins: dict[str, str] | None = None) -> EvalConfig:
    """Validate `data` into an EvalConfig; `origins` (field → "flag", "--set" or a file) lets a bad
    value's error name what the user wrote. Raises one-line UsageErrors."""
    origins = origins or {}
    unknown = sorted(set(data) - set(EvalConfig.model_fields))
    if unknown:
        import difflib

        where = origins.get(unknown[0], "the eval config")
        close = difflib.get_close_matches(unknown[0], list(EvalConfig.model_fields), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(f"{where}: unknown eval config key {unknown[0]!r}",
                         f"{hint}valid keys: {', '.join(EvalConfig.model_fields)}")
    try:
        config = EvalConfig(**data)
    except ValidationError as exc:
        raise _usage_error(exc, data, origins) from None
    config._origins = dict(origins)
    return config


def option_label(name: str, origins: dict[str, str]) -> str:
    """Field `name` as the user set it (`origins`: field → "flag", "--set" or a file's path)."""
    origin = origins.get(name, "flag")
    if origin == "--set":
        return f"--set {name}"
    if origin != "flag":
        return f"{name} in {origin}"
    return EvalConfig.flag(name) or name


def _written(name: str, value: Any, origins: dict[str, str]) -> str:
    """`value` of field `name` as the user would write it where they set the field."""
    origin = origins.get(name, "flag")
    if origin == "--set":
        return f"--set {name}={value}"
    if origin != "flag":
        return f"{name}: {value}"
    return EvalConfig.as_option(name, value)


def _usage_error(exc: ValidationError, data: dict[str, Any], origins: dict[str, str]) -> UsageError:
    """The first validation error as one line naming the flag or key, the allowed values and the default."""
    first = exc.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else ""
    conflict = first.get("ctx", {}).get("error")
    if isinstance(conflict, Conflict):
        return UsageError(conflict.problem, conflict.fix)
    if name not in EvalConfig.model_fields:
        return UsageError(f"eval config: {first['msg']}", "fix the value it names")
    who = option_label(name, origins)
    allowed = describe_allowed(name) or first["msg"].lower()
    default = EvalConfig.model_fields[name].get_default(call_default_factory=True)
    fix = f"or leave {who} out" if default is None else f"e.g. {_written(name, default, origins)} (the default)"
    return UsageError(f"{who} must be {allowed}, got {data.get(name)!r}", fix)


def describe_allowed(name: str) -> str | None:
    """The allowed values of field `name` in words: "an integer ≥ 1", "a number in (0, 1]",
    "one of auto, cuda, interpreter"; None when any value of its type is allowed."""
    info = EvalConfig.model_fields[name]
    bounds = {type(m).__name__: getattr(m, type(m).__name__.lower()) for m in info.metadata
              if isinstance(m, (at.Ge, at.Gt, at.Le, at.Lt))}
    annotation = info.annotation
    optional = typing.get_origin(annotation) in (typing.Union, getattr(__import__("types"), "UnionType", None))
    args = [a for a in typing.get_args(annotation) if a is not type(None)] if optional else [annotation]
    literal = next((a for a in args if typing.get_origin(a) is Literal), None)
    if literal is not None:
        return "one of " + ", ".join(typing.get_args(literal))
    if bool in args:
        return "true or false"
    if typing.get_origin(args[0]) is list:
        return "a list of names (or one comma-separated string)"
    kind = "an integer" if int in args else "a number" if float in args else None
    if kind is None:
        return "text" if str in args else None
    low = (f"({bounds['Gt']:g}" if "Gt" in bounds else f"[{bounds['Ge']:g}" if "Ge" in bounds else None)
    high = (f"{bounds['Lt']:g})" if "Lt" in bounds else f"{bounds['Le']:g}]" if "Le" in bounds else None)
    if low and high:
        return f"{kind} in {low}, {high}"
    if low:
        return f"{kind} {'>' if low[0] == '(' else '≥'} {low[1:]}"
    if high:
        return f"{kind} {'<' if high[-1] == ')' else '≤'} {high[:-1]}"
    return kind


def with_default_tasks(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with the main job's tasks when nothing narrows the selection (no tasks, level,
    limit, split or --with-solution on the builtin suite)."""
    narrowed = any(data.get(k) for k in ("tasks", "level", "limit", "split", "with_solution"))
    if narrowed or data.get("suite", "builtin") != "builtin":
        return data
    return {**data, "tasks": list(DEFAULT_TASKS)}


def load_eval_config(path: str | Path | None = None, overrides: list[str] | None = None,
                     flags: dict[str, Any] | None = None) -> EvalConfig:
    """The run a YAML file, `--set key=value` overrides and command-line `flags` (None: not
    given) describe, later ones winning; the main job's tasks when nothing selects any."""
    from atrl.rl.config import parse_overrides, read_yaml_mapping

    data: dict[str, Any] = {}
    origins: dict[str, str] = {}
    if path is not None:
        loaded = read_yaml_mapping(path)
        data.update(loaded)
        origins.update(dict.fromkeys(loaded, str(path)))
    for source, values in (("--set", parse_overrides(overrides or [])),
                           ("flag", {k: v for k, v in (flags or {}).items() if v is not None})):
        data.update(values)
        origins.update(dict.fromkeys(values, source))
    return make_eval_config(with_default_tasks(data), origins)
