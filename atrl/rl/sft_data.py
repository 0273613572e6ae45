"""Supervised examples for the warm start: (agent prompt → assistant response) token sequences.

Every example is built through the agent itself, so SFT sees exactly what the policy sees in an
episode: `Episode` opens a segment (system prompt, knowledge-base text, task message at a size
preset), the template's assistant header is appended, then the target response as if sampled,
ending with the template's end-of-turn token (so the model learns to stop). `loss_mask` is the
segment's `trainable_mask()`: exactly the response tokens and that end-of-turn token.

Sources:
- reference solutions of training-split tasks: the response is a one-line plan, then the
  solution in a ```python block; one example per (platform, preset, kb on/off) variant;
- successful turns of earlier runs (rejection-sampling fine-tuning): for a turn whose verdict
  is ok, on a training-split task, the prompt is its segment's context up to the response and
  the target is the sampled response tokens as recorded;
- failed turns of earlier runs: the next turn's recorded context (after a compaction, the
  policy's own summary and the real verdict) with the task's reference solution as the target.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atrl.agent.config import AgentConfig
from atrl.agent.context import closing_text
from atrl.agent.episode import Episode
from atrl.agent.interfaces import Knowledge
from atrl.agent.trajectory_io import read_trajectories
from atrl.errors import UsageError
from atrl.harness.verdict import Verdict
from atrl.policy.base import Generation
from atrl.tasks.mutations import plus_one_variant
from atrl.tasks.task import Task

_KERNEL_RE = re.compile(r"@triton\.jit[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)")


@dataclass
class SftExample:
    """One training sequence. `loss_mask[i]` is True where token i is a target token."""

    task_id: str
    source: str  # "solution" | "trajectory"
    variant: str  # "cuda/full/kb" for solutions; "FILE:line/turn" for trajectories
    token_ids: list[int]
    loss_mask: list[bool]

    @property
    def num_targets(self) -> int:
        return sum(self.loss_mask)

    def record(self) -> dict:
        """A short JSON-able description (no token ids) for `sft_data.jsonl`."""
        return {
            "task_id": self.task_id,
            "source": self.source,
            "variant": self.variant,
            "tokens": len(self.token_ids),
            "target_tokens": self.num_targets,
        }


@dataclass
class BuildReport:
    """Counts of what was kept and why the rest was skipped."""

    kept: Counter = field(default_factory=Counter)  # by source
    skipped: Counter = field(default_factory=Counter)  # by reason


def plan_line(task: Task) -> str:
    """The one-line plan that precedes a reference solution: the kernels it launches and what
    they compute (from the task's description)."""
    kernels = list(dict.fromkeys(_KERNEL_RE.findall(task.solution or "")))
    what = task.description.strip().rstrip(".") or f"the {task.name} task"
    if kernels:
        names = ", ".join(f"`{k}`" for k in kernels)
        count = "one Triton kernel" if len(kernels) == 1 else f"{len(kernels)} Triton kernels"
        how = f"{count} ({names})"
    else:
        how = "Triton kernels"
    return (
        f"Plan: {how} for {what}, with masked block loads and stores; `ModelNew.forward` only "
        "allocates outputs and launches them."
    )


def solution_response(task: Task, code: str | None = None) -> str:
    """The assistant response for a task with a reference solution: plan, then the code block
    (`code`, default the solution itself)."""
    if not task.solution:
        raise ValueError(f"task {task.id} has no reference solution")
    return f"{plan_line(task)}\n\n```python\n{(code or task.solution).strip()}\n```"


def response_ids(policy: Any, text: str) -> list[int]:
    """`text` as a response's tokens: its own, then the template's end-of-turn token (the model
    learns to stop)."""
    return policy.tokenize(text) + policy.tokenize(closing_text(policy))[:1]


def _respond(episode: Episode, text: str) -> SftExample | str:
    """Append `text` as the episode's first response; the example, or the reason it is skipped."""
    policy, ctx = episode.policy, episode.ctx
    ctx.open_assistant("response", turn=0)
    ids = response_ids(policy, text)
    if len(ids) > episode.config.max_response_tokens:
        return "response_too_long"
    ctx.add_generation(Generation(text=text, token_ids=ids, logprobs=[0.0] * len(ids)), "response", turn=0)
    seg = ctx.segment
    return SftExample(
        task_id=episode.task.id,
        source="solution",
        variant="",
        token_ids=list(seg.token_ids),
        loss_mask=seg.trainable_mask(),
    )


def solution_examples(
    policy: Any,
    tasks: Iterable[Task],
    agent: dict[str, Any],
    platforms: Sequence[str],
    presets: Sequence[str],
    kb_variants: Sequence[bool],
    knowledge_for: Callable[[str], Knowledge | None],
    report: BuildReport,
) -> list[SftExample]:
    """One example per task with a solution and per (platform, preset, kb) variant, each prompt
    built by `Episode` with `AgentConfig(**agent, platform=, preset=, kb=)`. Identical sequences
    (e.g. kb on with no kb text) are kept once. `knowledge_for(platform)` gives the injector."""
    examples: list[SftExample] = []
    seen: set[tuple[int, ...]] = set()
    for task in tasks:
        if not task.solution:
            report.skipped["no_solution"] += 1
            continue
        response = solution_response(task)
        for platform, preset, kb in itertools.product(platforms, presets, kb_variants):
            config = AgentConfig(**{**agent, "platform": platform, "preset": preset, "kb": kb})
            episode = Episode(task, 0, policy, config, knowledge_for(platform) if kb else None)
            if episode.phase == "done":
                report.skipped["prompt_over_budget"] += 1
                continue
            example = _respond(episode, response)
            if isinstance(example, str):
                report.skipped[example] += 1
                continue
            key = tuple(example.token_ids)
            if key in seen:
                report.skipped["duplicate"] += 1
                continue
            seen.add(key)
            example.variant = f"{platform}/{preset}/{'kb' if kb else 'nokb'}"
            examples.append(example)
            report.kept["solution"] += 1
    return examples


def _generation(episode: Episode, text: str) -> Generation:
    """`text` as if sampled: its tokens and the template's end-of-turn token."""
    ids = response_ids(episode.policy, text)
    return Generation(text=text, token_ids=ids, logprobs=[0.0] * len(ids))


def _after_feedback(task: Task, first: str, agent: AgentConfig, policy: Any, judge: Callable[[Task, str], Verdict],
                    knowledge: Knowledge | None, first_ok: bool) -> SftExample | str:
    """One episode driven by hand: `first` as turn 0, judged; the compaction (the agent's own
    structured summary, as when a policy's summary is unusable); then the reference solution as
    turn 1, the only target. The example, or why it is skipped."""
    episode = Episode(task, 0, policy, agent, knowledge)
    if episode.phase == "done":
        return "prompt_over_budget"
    episode.turn_request()
    episode.record_response(_generation(episode, solution_response(task, first)))
    verdict = judge(task, episode.traj.turns[0].response_text)
    if verdict.ok != first_ok:
        return "variant_passed" if verdict.ok else "solution_failed"
    episode.record_verdict(verdict)
    if episode.phase == "compact":
        episode.summary_request()
        episode.record_summary(_generation(episode, ""))
    if episode.phase != "turn":
        return "no_second_turn"
    episode.turn_request()
    turn = episode.record_response(_generation(episode, solution_response(task)))
    if turn.finish_reason == "length" or episode.ctx.segment.index != turn.segment:
        return "response_too_long"
    ids = episode.ctx.segment.token_ids[: turn.response_end]
    return SftExample(task_id=task.id, source="repair" if not first_ok else "keep", variant="",
                      token_ids=list(ids), loss_mask=[turn.response_start <= i for i in range(turn.response_end)])


def repair_examples(
    policy: Any,
    tasks: Iterable[Task],
    agent: dict[str, Any],
    platform: str,
    preset: str,
    judge: Callable[[Task, str], Verdict],
    knowledge: Knowledge | None,
    report: BuildReport,
) -> list[SftExample]:
    """Second turns for every task with a solution: a *repair* (turn 0 is the solution with every
    `tl.store` writing `value + 1`, judged wrong; turn 1 fixes it after the feedback) and a *keep*
    (turn 0 is the solution, judged right; turn 1 submits it again instead of breaking it). The
    agent's settings are `agent` with at least two turns; `judge(task, response)` gives turn 0's
    real verdict, at `preset`, the sizes the task message shows."""
    config = AgentConfig(**{**agent, "platform": platform, "preset": preset, "kb": knowledge is not None,
                            "max_turns": max(2, agent.get("max_turns", 2))})
    examples: list[SftExample] = []
    for task in tasks:
        if not task.solution:
            report.skipped["no_solution"] += 1
            continue
        wrong = plus_one_variant(task.solution)
        firsts = [(task.solution, True)] + ([(wrong, False)] if wrong is not None else [])
        for first, first_ok in firsts:
            example = _after_feedback(task, first, config, policy, judge, knowledge, first_ok)
            if isinstance(example, str):
                report.skipped[example] += 1
                continue
            example.variant = f"{platform}/{preset}/{example.source}"
            examples.append(example)
            report.kept[example.source] += 1
    return examples


def trajectory_files(paths: Iterable[str | Path]) -> list[Path]:
    """Trajectory journals named by the config: a `trajectories.jsonl` (or any trajectory JSONL)
    file; an eval run's `episodes.jsonl`, meaning the `trajectories.jsonl` beside it; or a run
    directory, meaning every `trajectories.jsonl` and `trajectories/*.jsonl` below it."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*.jsonl")
                if p.name == "trajectories.jsonl" or p.parent.name == "trajectories"
            )
            if not found:
                raise UsageError(
                    f"no trajectory files under {path}", "name a run directory of `atrl eval` or `atrl train`"
                )
            files += found
            continue
        if path.name == "episodes.jsonl":
            path = path.with_name("trajectories.jsonl")
        if not path.is_file():
            raise UsageError(
                f"trajectory file {path} does not exist", "fix the `trajectories` list of the config"
            )
        files.append(path)
    return files


def decodes_to(policy: Any, ids: list[int], text: str) -> bool:
    """The recorded tokens decode to the recorded response: they are this policy's tokens."""
    vocab = len(policy.tokenizer) if getattr(policy, "tokenizer", None) is not None else None
    if vocab is not None and any(i < 0 or i >= vocab for i in ids):
        return False
    try:
        return text.strip() in policy.detokenize(ids)
    except (ValueError, KeyError, IndexError, TypeError):  # ids outside this tokenizer
        return False


def trajectory_examples(
    policy: Any,
    paths: Iterable[str | Path],
    train_ids: set[str],
    report: BuildReport,
    max_per_task: int | None = None,
    min_turn: int = 0,
) -> list[SftExample]:
    """Examples from the ok turns (turn index ≥ `min_turn`) of recorded trajectories of
    training-split tasks. Turns of other tasks, turns whose tokens are not this policy's, and
    repeats of a response already kept after the same context are skipped (the same kernel after
    two different summaries is two examples); at most `max_per_task` per task when given."""
    examples: list[SftExample] = []
    per_task: Counter = Counter()
    seen: set[tuple[str, int, str]] = set()
    for path in trajectory_files(paths):
        for line, traj in enumerate(read_trajectories(path), start=1):
            for turn in traj.turns:
                if turn.index < min_turn or not (turn.verdict or {}).get("ok"):
                    continue
                if traj.task_id not in train_ids:
                    report.skipped["not_training_task"] += 1
                    continue
                seg = traj.segments[turn.segment]
                target = seg.token_ids[turn.response_start : turn.response_end]
                if not target or not decodes_to(policy, target, turn.response_text):
                    report.skipped["other_tokenizer"] += 1
                    continue
                key = (traj.task_id, hash(tuple(seg.token_ids[: turn.response_start])), turn.response_text.strip())
                if key in seen or (max_per_task is not None and per_task[traj.task_id] >= max_per_task):
                    report.skipped["duplicate_or_over_cap"] += 1
                    continue
                seen.add(key)
                per_task[traj.task_id] += 1
                mask = [turn.response_start <= i for i in range(turn.response_end)]
                examples.append(
                    SftExample(
                        task_id=traj.task_id,
                        source="trajectory",
                        variant=f"{path.name}:{line}/turn{turn.index}",
                        token_ids=list(seg.token_ids[: turn.response_end]),
                        loss_mask=mask,
                    )
                )
                report.kept["trajectory"] += 1
    return examples


def context_repair_examples(
    policy: Any,
    paths: Iterable[str | Path],
    tasks: dict[str, Task],
    report: BuildReport,
) -> list[SftExample]:
    """Repairs in the policy's own contexts: for every recorded turn whose previous turn failed,
    on a training task with a reference solution, the prompt is that turn's segment up to its
    response (after a compaction: the policy's own summary, its failed kernel and the real
    verdict) and the target is the reference solution's response in place of what was sampled.
    `tasks` holds the training tasks. Targets longer than the episode's `max_response_tokens`
    (a rollout could not write them) and contexts seen before are skipped."""
    examples: list[SftExample] = []
    seen: set[tuple[str, int]] = set()
    targets: dict[str, list[int]] = {}
    for path in trajectory_files(paths):
        for line, traj in enumerate(read_trajectories(path), start=1):
            task = tasks.get(traj.task_id)
            for previous, turn in itertools.pairwise(traj.turns):
                if (previous.verdict or {}).get("ok") or previous.verdict is None:
                    continue
                if task is None or not task.solution:
                    report.skipped["not_training_task" if task is None else "no_solution"] += 1
                    continue
                seg = traj.segments[turn.segment]
                sampled = seg.token_ids[turn.response_start : turn.response_end]
                if not sampled or not decodes_to(policy, sampled, turn.response_text):
                    report.skipped["other_tokenizer"] += 1
                    continue
                context = list(seg.token_ids[: turn.response_start])
                key = (traj.task_id, hash(tuple(context)))
                if key in seen:
                    report.skipped["duplicate_context"] += 1
                    continue
                seen.add(key)
                if task.id not in targets:
                    targets[task.id] = response_ids(policy, solution_response(task))
                target = targets[task.id]
                if len(target) > traj.config.get("max_response_tokens", len(target)):
                    report.skipped["response_too_long"] += 1
                    continue
                examples.append(SftExample(task_id=traj.task_id, source="context-repair",
                                           variant=f"{path.name}:{line}/turn{turn.index}",
                                           token_ids=context + target,
                                           loss_mask=[False] * len(context) + [True] * len(target)))
                report.kept["context-repair"] += 1
    return examples


def relay_demonstrations(
    policy: Any,
    tasks: Iterable[Task],
    agent: dict[str, Any],
    platform: str,
    preset: str,
    per_task: int,
    report: BuildReport,
    seed: int = 0,
) -> list[SftExample]:
    """The key-relay environment's warm start (`atrl.rl.key_relay`): `per_task` episodes per task,
    each driven by hand through the agent with a `KeyRelay` as its knowledge hook. Turn 0 is a
    one-line first answer (context, not a target); after its verdict the key is shown; then two
    examples: the compaction summary, which keeps the key (target), and, in the next segment,
    the second answer, which writes it (target; there the key is only in the carried summary).
    The agent's settings are `agent` with one turn per segment and two segments."""
    from atrl.rl.key_relay import KeyRelay

    config = AgentConfig(**{**agent, "platform": platform, "preset": preset, "kb": True,
                            "max_turns": 2, "turns_per_segment": 1, "max_segments": 2})
    relay = KeyRelay(spread=1.0, bonus=1.0, seed=seed)
    examples: list[SftExample] = []
    for task in tasks:
        for i in range(per_task):
            relay.begin_step(i)
            episode = Episode(task, i, policy, config, relay)
            if episode.phase == "done":
                report.skipped["prompt_over_budget"] += 1
                continue
            first = f"Attempt {i + 1}: a first kernel for {task.name}."
            episode.turn_request()
            episode.record_response(_generation(episode, first))
            episode.record_verdict(relay.submit(task, first).result())
            if episode.phase != "compact":
                report.skipped["no_compaction"] += 1
                continue
            key = relay.key_for(task.id, first)
            episode.summary_request()
            summary = f"Key for the next answer: {key}. My first answer scored {episode.traj.best_score:.2f}."
            episode.record_summary(_generation(episode, summary))
            before = episode.traj.segments[0]
            span = next(s for s in before.spans if s.type == "summary")
            if episode.phase != "turn" or before.summary_text != summary:  # cut at summary_tokens
                report.skipped["summary_too_long"] += 1
                continue
            episode.turn_request()
            turn = episode.record_response(_generation(episode, f"Key: {key}"))
            if turn.finish_reason == "length":
                report.skipped["response_too_long"] += 1
                continue
            after = episode.ctx.segment.token_ids[: turn.response_end]
            variant = f"{platform}/{preset}/relay{i}"
            sampled = before.trainable_mask()  # the summary's own tokens, not the template around them
            examples.append(SftExample(task.id, "relay-summary", variant, list(before.token_ids[: span.end]),
                                       [span.start <= j and sampled[j] for j in range(span.end)]))
            examples.append(SftExample(task.id, "relay-answer", variant, list(after),
                                       [turn.response_start <= j for j in range(turn.response_end)]))
            report.kept["relay"] += 2
    return examples
