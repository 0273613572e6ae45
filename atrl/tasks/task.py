"""The `Task` record: one reference PyTorch module to reimplement with Triton kernels.

A task's `source` is a self-contained Python module defining `Model(nn.Module)`,
`get_init_inputs()` and either `get_inputs()` (one input case) or `get_input_groups()`
(several shape cases, NPUKernelBench form). Sizes live in module-level integer constants;
a *preset* is a mapping of constant names to values substituted into the source in memory
(see `atrl.tasks.resize`), so running a task small never edits a file.

Tasks are loaded without executing their files: metadata comes from static parsing.
Only harness workers execute task sources.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ComputePolicy = Literal["strict", "partial"]

# Default tolerances by dtype (HARNESS-SPEC): allclose (atol, rtol) and the bound on the relative
# error ‖out − ref‖ / ‖ref‖ against a float64 evaluation of the reference.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (1e-2, 1e-2),
}
DEFAULT_PRECISION_BOUNDS: dict[str, float] = {"float32": 1e-5, "float16": 1e-3, "bfloat16": 1e-2}


@dataclass
class ShapeCase:
    """One input case of a multi-case task: a name and the JSON description it came from."""

    name: str
    spec: list[dict] = field(default_factory=list)


@dataclass
class Task:
    """One benchmark task. `id` is `suite/name`; `source` is the reference module's text
    as written (its default sizes); `presets` maps a preset name to constant substitutions."""

    id: str
    suite: str
    name: str
    level: int
    source: str
    tags: list[str] = field(default_factory=list)
    description: str = ""
    dtype: str = "float32"
    atol: float | None = None
    rtol: float | None = None
    precision_bound: float | None = None
    presets: dict[str, dict[str, int]] = field(default_factory=dict)
    cases: list[ShapeCase] = field(default_factory=list)
    multi_case: bool = False
    # flag name ("nondeterministic", "needs-hub", "slow-on-cpu", "skipped") -> reason
    flags: dict[str, str] = field(default_factory=dict)
    solution: str | None = None
    path: str | None = None
    compute_policy: ComputePolicy = "strict"
    reference_mutates_inputs: bool = False
    # extra torch calls allowed in ModelNew.forward for this task (on top of the harness allowlist)
    allow_torch: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # a tag listed twice in a task file would be counted twice by every per-tag tally
        self.tags = list(dict.fromkeys(self.tags))

    def tolerances(self) -> tuple[float, float]:
        """(atol, rtol) for `allclose`: the task's override, else the dtype default."""
        atol, rtol = DEFAULT_TOLERANCES.get(self.dtype, DEFAULT_TOLERANCES["float32"])
        return (self.atol if self.atol is not None else atol, self.rtol if self.rtol is not None else rtol)

    def relative_error_bound(self) -> float:
        """Bound on ‖out − ref‖ / ‖ref‖ against the float64 reference."""
        if self.precision_bound is not None:
            return self.precision_bound
        return DEFAULT_PRECISION_BOUNDS.get(self.dtype, DEFAULT_PRECISION_BOUNDS["float32"])

    def source_at(self, preset: str | None) -> str:
        """The reference source with the preset's constants substituted (`None`: as written)."""
        if preset is None or preset not in self.presets:
            return self.source
        from atrl.tasks.resize import substitute_constants

        return substitute_constants(self.source, self.presets[preset])

    @property
    def skipped(self) -> bool:
        return "skipped" in self.flags

    def summary(self) -> dict:
        """A short JSON-able description for listings."""
        return {
            "id": self.id,
            "level": self.level,
            "tags": self.tags,
            "dtype": self.dtype,
            "presets": sorted(self.presets),
            "cases": len(self.cases) if self.multi_case else 1,
            "has_solution": self.solution is not None,
            "flags": self.flags,
        }
