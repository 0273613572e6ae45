"""What the agent says to the policy: the system prompt, the task, feedback, the compaction
instruction, and the carried state that opens a new segment.

Every function returns plain text; the agent types and tokenizes it (`atrl.agent.context`).
"""

from __future__ import annotations

import re

from atrl.tasks.task import Task

PLATFORM_NAMES = {
    "cuda": "an NVIDIA GPU (timed: faster kernels score higher)",
    "interpreter": "the Triton CPU interpreter (correctness only, no timing)",
    "npu": "an Ascend NPU through Triton-Ascend (timed)",
}


def system_prompt(platform: str = "cuda") -> str:
    """The platform's rules and the output format."""
    where = PLATFORM_NAMES.get(platform, platform)
    return (
        "You are an expert GPU kernel engineer. You rewrite PyTorch modules as Triton kernels.\n"
        f"Your code runs on {where}.\n\n"
        "Rules:\n"
        "- Define `class ModelNew(nn.Module)` with exactly the same constructor and `forward` signatures "
        "as the reference `Model`, returning the same outputs (shape, dtype, values within tolerance).\n"
        "- All computation happens in `@triton.jit` kernels that `forward` launches (`kernel[grid](...)`).\n"
        "- PyTorch in `forward` is allowed only for allocation, views and shape/dtype queries "
        "(`torch.empty`, `empty_like`, `zeros`, `view`, `reshape`, `contiguous`, `size`, `stride`); no "
        "`torch.nn.functional`, matmul, softmax, convolution or other compute calls.\n"
        "- Keep the reference precision (no fp16/bf16/TF32 shortcuts for an fp32 task); handle every "
        "input size with masks.\n"
        "- No `try`/`except`, threads, processes, file or network access, `exec`/`eval`, monkeypatching, "
        "or references to the reference `Model`.\n\n"
        "Output format: first your reasoning in a few sentences, then ONE ```python code block with the "
        "complete module (imports, kernels, `ModelNew`). Nothing after the code block."
    )


def task_message(task: Task, preset: str | None) -> str:
    """The task: the reference module's source at the size preset the harness runs."""
    source = task.source_at(preset).strip()
    desc = f"\n{task.description.strip()}\n" if task.description.strip() else ""
    return (
        f"Task {task.id} ({task.dtype}).{desc}\n"
        "Here is the reference PyTorch module. Write `ModelNew` that computes the same with Triton kernels.\n\n"
        f"```python\n{source}\n```"
    )


def feedback_message(turn: int, score: float, feedback: str, cut_at: int | None = None) -> str:
    """The harness's verdict on attempt `turn` (0-based), as the policy sees it; `cut_at`: the
    token limit the response ran into, when it was cut there (the harness cannot know that)."""
    cut = (f"Your answer was cut at the limit of {cut_at} tokens before it ended: write a shorter answer "
           "(less explanation, one complete module).\n") if cut_at is not None else ""
    return (
        f"Result of attempt {turn + 1}: score {score:.3g}.\n{cut}{feedback.strip()}\n\n"
        "Fix the problems or make the kernel faster, and answer again with the complete module."
    )


def compaction_instruction(summary_tokens: int) -> str:
    """Ask the policy to summarise its attempts in at most `summary_tokens` tokens."""
    return (
        "The context is full. Write a concise summary of your work so far, at most "
        f"{summary_tokens} tokens, no code: what you tried in each attempt, the errors you got, "
        "and the best result so far with what made it work. The summary replaces this conversation."
    )


def summary_piece(summary: str) -> str:
    """The carried summary at the start of a new segment."""
    return f"\n\nSummary of your earlier attempts:\n{summary.strip()}"


def carried_kernel_piece(code: str | None, score: float, feedback: str) -> str:
    """The best kernel so far with its verdict, at the start of a new segment."""
    if code is None:
        return "\n\nNo attempt has produced a kernel yet."
    return (
        f"\n\nYour best kernel so far (score {score:.3g}):\n```python\n{code.strip()}\n```\n"
        f"Its result: {feedback.strip()}\n\nContinue from it and answer with the complete module."
    )


_FENCE_RE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


def extract_code(response: str) -> str | None:
    """The last fenced code block of a response, or None (display only; the harness judges)."""
    blocks = _FENCE_RE.findall(response)
    return blocks[-1] if blocks else None


def structured_summary(attempts: list[dict], best_turn: int | None, best_score: float, max_listed: int = 8) -> str:
    """The deterministic fallback summary used when the policy's own summary is empty or unusable.

    `attempts`: one dict per turn so far, with keys `turn` (0-based), `score`, `stage`,
    `error_class` and `message`. Lists the last `max_listed` attempts and the best result.
    """
    lines = [f"Attempts so far: {len(attempts)}."]
    if best_turn is None:
        lines.append("Best result: none yet.")
    else:
        lines.append(f"Best result: attempt {best_turn + 1} with score {best_score:.3g}.")
    for a in attempts[-max_listed:]:
        what = a.get("error_class") or a.get("stage") or "?"
        msg = (a.get("message") or "").strip().splitlines()
        detail = f" — {msg[0][:160]}" if msg else ""
        lines.append(f"- attempt {a['turn'] + 1}: score {a['score']:.3g}, {what}{detail}")
    return "\n".join(lines)


def summary_is_usable(text: str) -> bool:
    """A summary is usable when it has at least one letter (empty or symbol-only text is not)."""
    return any(ch.isalpha() for ch in text)
