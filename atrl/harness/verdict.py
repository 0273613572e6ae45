"""The `Verdict` record: what the harness concluded about one candidate for one task.

Stages run as a cascade (HARNESS-SPEC): format → static → compile → correctness → profile.
`stage` is the stage that failed, or `"done"` when every stage the backend runs passed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

Stage = Literal["format", "static", "compile", "correctness", "profile", "done"]
STAGES: tuple[str, ...] = ("format", "static", "compile", "correctness", "profile", "done")


def candidate_hash(source: str) -> str:
    """Stable id of a candidate's code: sha256 of its text, first 16 hex digits."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


@dataclass
class CorrectnessStats:
    """Outcome of the correctness trials. Errors are over the worst trial/case."""

    trials: int = 0  # trials run, the wide-input ones included
    passed: int = 0
    wide_trials: int = 0  # of `trials`: those on wide-range inputs, run after the task's own draws
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    mismatch_fraction: float | None = None
    first_mismatch_index: list[int] | None = None
    relative_error_vs_fp64: float | None = None
    # lowest over the calls: 1 - bytes of PyTorch compute on the data path / bytes of the reference's ops
    triton_share: float | None = None
    skipped: list[str] = field(default_factory=list)  # e.g. wide-input trial skipped: reference not finite
    # wall seconds by part of the stage (inputs, reference, float64, candidate, compare, provenance,
    # same-storage, diagnosis), the device synchronised at each part's end
    seconds: dict[str, float] = field(default_factory=dict)

    def passed_text(self) -> str:
        """`passed/trials`, naming the wide-input trials when there are any: "7/7 (5 trials + 2 wide-input)"."""
        counts = f"{self.passed}/{self.trials}"
        if not self.wide_trials:
            return counts
        return f"{counts} ({self.trials - self.wide_trials} trials + {self.wide_trials} wide-input)"


@dataclass
class Timing:
    """Profile results, milliseconds; per-case lists for multi-case tasks."""

    candidate_ms: float
    reference_ms: float
    speedup: float
    compile_reference_ms: float | None = None
    speedup_vs_compile: float | None = None
    coverage: float | None = None  # share of device time in the candidate's own Triton kernels
    coverage_seconds: float | None = None  # wall seconds of the coverage run under torch.profiler
    kernels: list[dict] = field(default_factory=list)  # [{"name", "ms", "share", "triton": bool}]
    cases: list[dict] = field(default_factory=list)


@dataclass
class Verdict:
    task_id: str
    candidate_hash: str
    backend: str
    device: str
    stage: str
    ok: bool
    error_class: str | None = None  # e.g. "static:pytorch-compute", "compile:error", "correctness:mismatch"
    message: str = ""
    line: int | None = None  # offending line in the candidate, when known
    correctness: CorrectnessStats | None = None
    # for a wrong result: the cause read from the error's shape (atrl.harness.feedback.diagnosis.Diagnosis)
    diagnosis: dict | None = None
    timing: Timing | None = None
    score: float = 0.0
    feedback: str = ""
    flags: list[str] = field(default_factory=list)  # e.g. "speedup>10x: review", "low-coverage"
    # reference names the candidate defines (Model, get_inputs, ...) and "__main__ block": never run
    ignored_definitions: list[str] = field(default_factory=list)
    reward_hack: bool = False  # rejected by a static anti-cheat rule
    versions: dict[str, str] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    # the job's memory: task footprint estimate, allowance and peak use (bytes), how it ran
    memory: dict = field(default_factory=dict)
    harness_version: str = ""
    cached: bool = False

    @property
    def judge_seconds(self) -> float:
        """Seconds on the judge's clock, over every stage. `stage_seconds["device_wait"]` (time
        queued for the GPU while another job was timed, as the pool saw it) is left out: it
        overlaps the stages it happened in."""
        return sum(v for k, v in self.stage_seconds.items() if k != "device_wait")

    @property
    def compiled(self) -> bool:
        return self.stage in ("correctness", "profile", "done")

    @property
    def speedup(self) -> float | None:
        return self.timing.speedup if self.timing is not None else None

    @classmethod
    def failed(cls, task_id: str, code: str, backend: str, device: str, stage: str,
               error_class: str | None = None, message: str = "", **details: Any) -> Verdict:
        """The one constructor the harness uses: `code` judged for task `task_id` on `backend`
        (`device`), failed at `stage` with `error_class` and `message`; `details` set other fields
        (`line`, `versions`, `stage_seconds`). The driver (format, static), the pool (crash,
        timeout) and the worker's judge all start here; the judge starts from a failure at
        "compile" and marks its verdict ok once every stage passed."""
        return cls(task_id=task_id, candidate_hash=candidate_hash(code), backend=backend, device=device,
                   stage=stage, ok=False, error_class=error_class, message=message, **details)

    @classmethod
    def from_dict(cls, data: dict) -> Verdict:
        data = dict(data)
        if data.get("correctness") is not None:
            data["correctness"] = CorrectnessStats(**_revive_floats(data["correctness"]))
        if data.get("timing") is not None:
            data["timing"] = Timing(**_revive_floats(data["timing"]))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


_NON_FINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def _revive_floats(values: dict) -> dict:
    """Undo `to_jsonable`'s spelling of NaN/Inf as strings ("nan", "inf", "-inf"): a stale output
    full of NaN gives NaN error statistics, which must stay numbers for feedback and metrics."""
    return {k: _NON_FINITE.get(v, v) if isinstance(v, str) else v for k, v in values.items()}
