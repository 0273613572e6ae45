"""The record of a diagnosis (`atrl.harness.feedback.diagnosis`), apart from the torch code that finds one:
the worker pool builds timeout diagnoses (`atrl.harness.feedback.timeouts`) without importing torch."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Diagnosis:
    """A cause (a CAUSES key), the words shown first, the numbers behind it, the fix, the
    knowledge-base entry id; `detail` narrows the cause (e.g. "tf32", "grid", "exp-overflow")."""

    cause: str
    summary: str
    evidence: str
    fix: str
    kb_entry: str
    detail: str = ""

    def to_dict(self) -> dict:
        return asdict(self)
