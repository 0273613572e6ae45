"""What a worker's death or failure says about the candidate: signal names, out-of-memory
detection, and a crash summary for the agent built from the worker's captured output.

Pure functions over text and exit codes; the pool (`atrl.harness.sandbox.pool`) calls them.
"""

from __future__ import annotations

import re
import signal

# A faulthandler frame inside the candidate's module (the judge writes it as candidate_<hash>.py).
_CANDIDATE_FRAME = re.compile(r'File "[^"]*?candidate[^"/]*\.py", line (\d+) in (\S+)')
# Errors raised by running candidate code; one that says memory ran out is `out-of-memory`.
RAN_CODE_CLASSES = frozenset({"compile:error", "correctness:runtime-error", "profile:error"})
_MEMORY_MARKERS = ("MemoryError", "can't allocate memory", "Cannot allocate memory",
                   "std::bad_alloc", "out of memory", "OutOfMemoryError")


def signal_name(returncode: int) -> str:
    """Name and meaning of the signal that killed a process (returncode = -signal), e.g. SIGSEGV."""
    try:
        sig = signal.Signals(-returncode)
    except ValueError:
        return f"signal {-returncode}"
    description = signal.strsignal(sig) or ""
    return f"{sig.name} ({description.lower()})" if description else sig.name


def crash_summary(output: str) -> tuple[str, int | None]:
    """What a dead worker's output says about the crash, for the agent: the fatal error line and
    the candidate's own frames (innermost first), without harness paths. Returns (text, line of
    the candidate's innermost frame or None)."""
    lines = output.splitlines()
    fatal = [ln.strip() for ln in lines if ln.startswith("Fatal Python error")][:1]
    frames: list[str] = []
    first_line = None
    for ln in lines:
        match = _CANDIDATE_FRAME.search(ln)
        if match:
            first_line = first_line or int(match.group(1))
            frame = f"  line {match.group(1)} in {match.group(2)}"
            if frame not in frames:
                frames.append(frame)
    if fatal or frames:
        where = ["in your code (innermost first):", *frames[:4]] if frames else []
        return "\n".join(fatal + where), first_line
    useful = output.split("Extension modules:")[0].strip()
    return useful[-800:], None


def looks_like_oom(text: str) -> bool:
    """Whether an error message says memory ran out (Python, torch's allocators, C++)."""
    return any(marker in text for marker in _MEMORY_MARKERS)
