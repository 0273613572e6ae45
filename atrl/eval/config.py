"""The configuration of an eval run: every field has a default and a one-line help.

Saved as `config.yaml` in the run directory; re-running with the same `--out` resumes only
when the result-defining fields match (a different policy or task set would mix two runs).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

import yaml

from atrl.errors import UsageError

# The main job of the README: a few level-1 builtin tasks, small enough for a 2-core CPU.
DEFAULT_TASKS = ["builtin/relu", "builtin/sigmoid", "builtin/add", "builtin/leaky_relu"]


@dataclass
class EvalConfig:
    suite: str = "builtin"  # builtin | kernelbench | npukernelbench
    path: str | None = None  # checkout directory for the kernelbench / npukernelbench suites
    level: int | None = None  # only tasks of this level
    tasks: list[str] = field(default_factory=list)  # task ids (or builtin names); empty = the whole selection
    limit: int | None = None  # at most this many tasks (after sorting by id)
    split: str | None = None  # a train/held-out split file (configs/split-builtin.yaml): tasks come from
    # `split_part`, and knowledge-base examples only from the split's training tasks
    split_part: str = "heldout"  # train | heldout
    with_solution: bool = False  # only tasks that ship a reference Triton solution (for the reference oracle)
    policy: str = "smollm2-135m"  # smollm2-135m | hf:PATH | openai:MODEL@URL | replay:FILE | reference
    engine: str | None = None  # generation engine of an hf/smollm2 policy: static | compiled | plain (default: static on a GPU)
    samples: int = 1  # episodes per task
    max_turns: int = 2  # turns per episode
    turns_per_segment: int = 4  # compact after this many turns in one segment (or earlier, when the budget demands)
    max_segments: int = 8  # segments per episode
    context_budget: int = 4096  # the policy's context window, in its tokens
    max_response_tokens: int = 512  # tokens per response
    summary_tokens: int = 256  # tokens per compaction summary
    target_score: float | None = None  # stop an episode once a turn reaches this score
    temperature: float = 0.7  # sampling temperature (0 = greedy)
    top_p: float = 0.95  # nucleus sampling
    seed: int = 0  # sampling seed
    kb: bool = True  # inject knowledge-base entries into the prompts
    kb_tokens: int = 600  # token budget for knowledge-base text per injection
    backend: str = "auto"  # auto | cuda | interpreter
    preset: str | None = None  # task size preset; default: the backend's (small on the interpreter)
    trials: int = 5  # correctness trials per evaluation
    timed_calls: int = 100  # timed calls per side on a timed backend
    workers: int | None = None  # harness worker processes (default: per backend)
    use_cache: bool = True  # reuse cached verdicts of identical candidates

    # fields that define the results: a resumed run must match them
    RESULT_FIELDS = (
        "suite", "level", "tasks", "limit", "split", "split_part", "with_solution", "policy", "samples", "max_turns", "turns_per_segment",
        "max_segments", "context_budget", "max_response_tokens", "summary_tokens", "temperature",
        "top_p", "seed", "kb", "backend", "preset", "trials",
    )

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> EvalConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise UsageError(f"unknown eval config keys {sorted(unknown)}", f"valid keys: {', '.join(sorted(known))}")
        return cls(**data)

    def check_resumable(self, saved: dict) -> None:
        """Raise UsageError when `saved` (an earlier run's config) differs in a result-defining field."""
        diffs = [k for k in self.RESULT_FIELDS if k in saved and saved[k] != getattr(self, k)]
        if diffs:
            detail = ", ".join(f"{k}: {saved[k]!r} → {getattr(self, k)!r}" for k in diffs)
            raise UsageError(
                f"the output directory holds a run with another configuration ({detail})",
                "use a new --out directory, or the same options to resume",
            )

    def dump(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)
