"""Scripted policies: `ReplayPolicy` (responses from a JSONL file) and `ReferencePolicy` (the task's
builtin reference solution every turn — an oracle for the whole pipeline).

Both count tokens with `atrl.policy.simple_tokenizer` and return no log-probs (`logprobs=None`):
they are not models. A generation's token ids are the response's tokens followed by the
end-of-turn token `<|im_end|>`, or, when the response is longer than `max_tokens`, its first
`max_tokens` tokens (finish reason `"length"`).
"""

from __future__ import annotations

from pathlib import Path

from atrl.errors import UsageError
from atrl.jsonio import read_journal
from atrl.policy.base import Generation, GenerationRequest, SamplingParams
from atrl.policy.simple_tokenizer import SimpleTokenizerMixin, detokenize, tokenize
from atrl.tasks.task import Task


def scripted_generation(text: str, max_tokens: int, eos_id: int) -> Generation:
    """A Generation for a fixed text, cut to `max_tokens` tokens (end-of-turn token included)."""
    ids = tokenize(text)
    if len(ids) < max_tokens:
        return Generation(text=text, token_ids=ids + [eos_id], logprobs=None, finish_reason="stop")
    cut = ids[:max_tokens]
    return Generation(text=detokenize(cut), token_ids=cut, logprobs=None, finish_reason="length")


class ReplayPolicy(SimpleTokenizerMixin):
    """Responses read from a JSONL file, one object per line:

    `{"task_id": str, "turn": int, "response": str}` with optional `"sample": int` (without it the
    line applies to every sample; a line with the request's sample wins) and optional
    `"kind": "summary"` for a compaction summary, whose `turn` is the last turn (0-based) before the
    compaction.

    Missing entries: a missing *turn* raises `UsageError` naming the task, sample and turn, unless
    `default` is given (then that text is the response — e.g. `default=""` replays an empty
    answer). A missing *summary* is the empty text, so the agent's structured fallback summary is
    used; this keeps replay files short.
    """

    def __init__(self, path: str | Path, default: str | None = None) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise UsageError(f"replay file {self.path} does not exist", "pass replay:FILE with a JSONL of responses")
        self.default = default
        self.name = f"replay:{self.path.name}"
        self._entries: dict[tuple[str, str, int, int | None], str] = {}
        for n, rec in enumerate(read_journal(self.path), start=1):
            try:
                key = (str(rec["task_id"]), str(rec.get("kind", "turn")), int(rec["turn"]),
                       None if rec.get("sample") is None else int(rec["sample"]))
                self._entries[key] = str(rec["response"])
            except (KeyError, TypeError, ValueError):
                raise UsageError(f"{self.path}: record {n} is malformed",
                                 'each line needs "task_id", "turn" and "response"') from None

    def lookup(self, request: GenerationRequest) -> str:
        """The scripted text for one request (see the class docstring for missing entries)."""
        for sample in (request.sample, None):
            key = (request.task_id, request.kind, request.turn, sample)
            if key in self._entries:
                return self._entries[key]
        if request.kind == "summary":
            return ""
        if self.default is not None:
            return self.default
        raise UsageError(
            f"{self.path}: no response for task {request.task_id!r}, sample {request.sample}, turn {request.turn}",
            "add a line for it or configure a default response",
        )

    def generate(self, requests: list[GenerationRequest], params: SamplingParams) -> list[Generation]:
        return [scripted_generation(self.lookup(r), params.max_tokens, self.eos_id) for r in requests]


NO_SOLUTION_TEXT = "There is no reference solution for this task, so no code is given."


def reference_response(task: Task) -> str:
    """The task's reference solution in one ```python block, or a text without code."""
    if task.solution is None:
        return NO_SOLUTION_TEXT
    return f"The reference Triton solution for {task.id}.\n\n```python\n{task.solution.rstrip()}\n```"


class ReferencePolicy(SimpleTokenizerMixin):
    """Answers every turn with the task's reference solution (and a compaction with a one-line
    summary saying so).

    `tasks` (optional) maps task ids to `Task`s; other ids are looked up with
    `atrl.tasks.registry.get_task`. Tasks without a solution get a response with no code, which
    the harness reports as `format:no-code`.
    """

    name = "reference"

    def __init__(self, tasks: list[Task] | None = None) -> None:
        self._tasks: dict[str, Task] = {t.id: t for t in tasks or []}

    def task(self, task_id: str) -> Task:
        if task_id not in self._tasks:
            from atrl.tasks.registry import get_task

            self._tasks[task_id] = get_task(task_id)
        return self._tasks[task_id]

    def respond(self, request: GenerationRequest) -> str:
        if request.kind == "summary":
            return f"Summary: I submitted the reference solution for {request.task_id}."
        return reference_response(self.task(request.task_id))

    def generate(self, requests: list[GenerationRequest], params: SamplingParams) -> list[Generation]:
        return [scripted_generation(self.respond(r), params.max_tokens, self.eos_id) for r in requests]
