"""Turn an exception raised by candidate code into a short message the agent can act on.

`StageFailure` carries a failure class (a key of `FAILURE_CLASSES`), a message and the candidate
line. `trim_exception` keeps only the frames of the candidate's own file (line, function, code)
and the final error line — no harness, torch or Triton frames — following `raise ... from`
chains, because the Triton interpreter wraps a kernel's error in an `InterpreterError`.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

MAX_MESSAGE_CHARS = 1200
_CUDA_ERROR = re.compile(
    r"CUDA error|Triton Error \[CUDA\]|illegal memory access|illegal address|misaligned address|"
    r"device-side assert|unspecified launch failure|CUDA_ERROR_",
)


class StageFailure(Exception):
    """A judged failure: `error_class` (a FAILURE_CLASSES key), one trimmed `message`, `line`,
    and for a wrong result its `diagnosis` (a `Diagnosis.to_dict()`)."""

    def __init__(self, error_class: str, message: str, line: int | None = None,
                 diagnosis: dict | None = None) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.line = line
        self.diagnosis = diagnosis


@dataclass
class TrimmedError:
    """The candidate's frames (innermost last) and the final error line of one exception."""

    frames: list[traceback.FrameSummary]
    final: str
    exception: BaseException

    syntax_line: int | None = None  # a SyntaxError's own line, when it is in the candidate's file

    @property
    def line(self) -> int | None:
        return self.frames[-1].lineno if self.frames else self.syntax_line

    @property
    def function(self) -> str | None:
        return self.frames[-1].name if self.frames else None

    def text(self) -> str:
        lines = [f"line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in self.frames[-6:]]
        lines.append(self.final)
        message = "\n".join(lines)
        return message if len(message) <= MAX_MESSAGE_CHARS else message[: MAX_MESSAGE_CHARS - 3] + "..."


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and its causes/contexts, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return chain


def _final_line(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    # Triton's CompilationError repeats the kernel source with a caret: keep it, it names the spot.
    return text.replace(str(Path.cwd()) + "/", "")


def trim_exception(exc: BaseException, candidate_file: str | None) -> TrimmedError:
    """The frames of `candidate_file` over the whole chain (call path first, then the frames of
    the wrapped error, e.g. a kernel line under the interpreter) and the final error line of the
    innermost exception that passed through the candidate's file (else of `exc`)."""
    chosen = exc
    frames: list[traceback.FrameSummary] = []
    for link in _chain(exc):
        own = [f for f in traceback.extract_tb(link.__traceback__) if candidate_file and f.filename == candidate_file]
        if own:
            chosen = link
            frames.extend(own)
    syntax_line = None
    if isinstance(chosen, SyntaxError) and candidate_file and chosen.filename == candidate_file:
        syntax_line = chosen.lineno
    return TrimmedError(frames=frames, final=_final_line(chosen), exception=chosen, syntax_line=syntax_line)


def is_cuda_error(exc: BaseException) -> bool:
    """True for errors that poison the CUDA context (illegal address, device assert, ...)."""
    name = type(exc).__name__
    if name == "OutOfMemoryError":
        return False
    return name == "AcceleratorError" or any(_CUDA_ERROR.search(str(link)) for link in _chain(exc))


def is_out_of_memory(exc: BaseException) -> bool:
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


@contextmanager
def reference_blamed(preset: str | None, inputs: str = "") -> Iterator[None]:
    """Errors raised inside are the task's reference failing (`task:reference-error`), not the
    candidate's: a size preset that breaks a reference whose sizes depend on each other, a
    package the task imports that is missing. `inputs` describes the inputs, when known. Out-of-memory
    and CUDA errors pass through (the pool classifies them as before)."""
    try:
        yield
    except Exception as exc:
        if isinstance(exc, StageFailure) or is_cuda_error(exc) or is_out_of_memory(exc):
            raise
        size = f"at the size preset {preset!r}" if preset else "at the task's written size"
        shapes = f" (inputs {inputs})" if inputs else ""
        raise StageFailure("task:reference-error",
                           f"the task's reference failed {size}{shapes}: {type(exc).__name__}: {exc}"[:600]) from exc
