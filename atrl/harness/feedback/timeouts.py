"""What a timeout ran out on: the size judged, the reference's own time at that size, and
whether the candidate or the size preset is the cause; for running out of memory, the size judged.

The judge reports facts while it runs (`preset`, `default_preset`, `inputs`, `reference_running`,
`reference_seconds`: see `atrl.harness.stages.judge`); the pool keeps the last ones of a job and, when a
stage runs past its limit, `explain_timeout` turns them into the verdict's message and diagnosis.
A reference that was still running, a reference whose own calls fill most of the stage, or a
preset larger than the backend's own all mean the size is too large for the backend: "remove
endless loops" would send the agent the wrong way.
"""

from __future__ import annotations

from atrl.harness.feedback.diagnosis_record import Diagnosis

# Reference calls a stage makes per trial: the task-dtype reference and its float64 copy.
REFERENCE_CALLS_PER_TRIAL = 2
WIDE_TRIALS = 2
# The reference's share of the stage limit above which the size, not the candidate, is the cause.
PRESET_SHARE = 0.5


def _reference_calls(stage: str, trials: int) -> int:
    if stage == "correctness":
        return REFERENCE_CALLS_PER_TRIAL * (trials + WIDE_TRIALS)
    return 1


def explain_timeout(stage: str, limit: float, facts: dict, trials: int) -> tuple[str, Diagnosis]:
    """(message, diagnosis) for a `stage` that ran past `limit` seconds, from the judge's facts."""
    preset = facts.get("preset") or "as written"
    size = f" at preset {preset!r}" + (f" (inputs {facts['inputs']})" if facts.get("inputs") else "")
    head = f"the {stage} stage ran past its {limit:g} s wall-clock limit{size}"
    reference = facts.get("reference_seconds")
    default = facts.get("default_preset")
    larger = default is not None and facts.get("preset") not in (None, default)
    if facts.get("reference_running") and reference is None:
        evidence = f"the reference model itself was still running at this size when the {limit:g} s limit hit"
        return _preset(head, evidence, preset)
    calls = _reference_calls(stage, trials)
    per_call = f"the reference takes {reference:.3g} s per call at this size" if reference is not None else ""
    if reference is not None and reference * calls >= PRESET_SHARE * limit:
        evidence = (f"{per_call}, and the {stage} stage runs it about {calls} times (~{reference * calls:.3g} s "
                    f"of the {limit:g} s limit)")
        return _preset(head, evidence, preset)
    if larger:
        evidence = (f"{per_call + ', but ' if per_call else ''}{preset!r} is larger than this backend's own preset "
                    f"{default!r}: a kernel run there takes far longer than the reference")
        return _preset(head, evidence, preset)
    interpreted = bool(facts.get("interpreted"))
    if reference is not None:
        evidence = (f"{per_call} (~{reference * calls:.3g} s for the {stage} stage's {calls} call(s)), so the "
                    f"candidate used the rest of the {limit:g} s")
        message = f"{head}; {evidence}: the candidate is the cause"
        return message + (INTERPRETER_NOTE if interpreted else ""), _candidate(evidence, interpreted)
    evidence = "no reference timing was recorded before the limit hit"
    message = f"{head}; {evidence} (an endless loop, or far too slow)"
    return message + (INTERPRETER_NOTE if interpreted else ""), _candidate(evidence, interpreted)


# A kernel that is fast on a GPU can be slow here: the interpreter runs every program in turn, and
# every tl operation as numpy calls on the whole block, so the cost is programs x loop trips x ops.
INTERPRETER_NOTE = (" (on the interpreter every program runs one after another in Python and each tl operation "
                    "costs about the same whatever the block size: a design fast on a GPU — many programs, long "
                    "loops over narrow blocks — can be too slow here)")


def _preset(head: str, evidence: str, preset: str) -> tuple[str, Diagnosis]:
    message = f"{head}; {evidence}: the size is too large for this backend, not the candidate's fault"
    return message, Diagnosis(
        "preset", "the task's size is too large for this backend: the reference alone fills the time limit",
        evidence,
        f"nothing to change in the kernel for this; judge at a smaller size preset than {preset!r} "
        "(e.g. --preset small on the interpreter) or raise the stage time limit",
        "fix-timeout-size", "preset")


def _candidate(evidence: str, interpreted: bool = False) -> Diagnosis:
    fix = ("remove endless loops; make sure the grid and loop bounds are finite, use triton.cdiv(n, BLOCK) programs "
           "with BLOCK well above 1, and few compile variants")
    if interpreted:
        fix += ("; on the interpreter, also use fewer programs with larger blocks (e.g. 64-256 rows per program, "
                "tl.dot on 2-D tiles, tl.sum over a whole block) instead of many programs or loops over narrow blocks")
    return Diagnosis(
        "candidate", "the candidate is too slow or never finishes (the reference itself is fast at this size)",
        evidence, fix, "fix-timeout", "candidate")


def with_size_note(message: str, facts: dict) -> str:
    """`message` of an out-of-memory verdict with the size judged appended, and who is the likely
    cause: the size when it is larger than the backend's own preset, else the candidate."""
    if not facts.get("inputs"):
        return message
    preset, default = facts.get("preset"), facts.get("default_preset")
    megabytes = facts.get("input_bytes", 0) / 2**20
    note = f"Size judged: preset {preset or 'as written'!r}, inputs {facts['inputs']} ({megabytes:.4g} MiB)"
    if default is not None and preset not in (None, default):
        note += f", larger than this backend's own preset {default!r}: the size may be the cause"
    else:
        note += "; the backend's own size: the candidate's allocations are the likely cause"
    return f"{message}\n{note}." if message else f"{note}."
