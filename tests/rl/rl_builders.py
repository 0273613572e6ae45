"""Builders for the rl tests: trajectories from a compact description, and a tiny random model."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from atrl.agent.records import Segment, Span, Trajectory, Turn


@dataclass
class TurnSpec:
    score: float
    response_len: int = 3
    finish_reason: str = "stop"


def make_trajectory(
    segments: list[list[TurnSpec | float]],
    summary_len: int = 2,
    last_summary: bool = False,
    task_id: str = "t",
    sample: int = 0,
    fallback: set[int] | None = None,
) -> Trajectory:
    """A trajectory whose segment k holds the given turns.

    Segment layout: task (2 tokens) [+ carried summary of the previous segment, typed "summary",
    not sampled] + per turn: response (sampled) + feedback (2 tokens) [+ compaction instruction
    (1 token) + written summary (sampled) when the segment is compacted: every segment but the
    last, and the last too with `last_summary`].
    """
    fallback = fallback or set()
    traj = Trajectory(task_id=task_id, sample=sample, policy="test")
    counter = [10]
    turn_index = 0
    carried = 0
    for k, turn_specs in enumerate(segments):
        seg = Segment(index=k)

        def add(
            kind: str, n: int, sampled: bool, turn: int | None = None, seg: Segment = seg
        ) -> tuple[int, int]:
            start = len(seg.token_ids)
            for _ in range(n):
                seg.token_ids.append(counter[0] % 50 + 3)
                seg.token_types.append(kind)
                seg.logprobs.append(-0.5 if sampled else None)
                counter[0] += 1
            seg.spans.append(Span(kind, start, start + n, turn))
            return start, start + n

        add("task", 2, False)
        if carried:
            add("summary", carried, False)
        for spec in turn_specs:
            spec = spec if isinstance(spec, TurnSpec) else TurnSpec(float(spec))
            start, end = add("response", spec.response_len, True, turn_index)
            add("feedback", 2, False, turn_index)
            traj.turns.append(
                Turn(
                    index=turn_index,
                    segment=k,
                    response_text="",
                    response_start=start,
                    response_end=end,
                    finish_reason=spec.finish_reason,
                    score=spec.score,
                )
            )
            seg.turns.append(turn_index)
            turn_index += 1
        compacted = k < len(segments) - 1 or last_summary
        if compacted:
            add("instruction", 1, False)
            add("summary", summary_len, k not in fallback)
            seg.summary_text = "summary"
            seg.summary_fallback = k in fallback
            carried = summary_len
        traj.segments.append(seg)
    traj.best_score = max([0.0] + [t.score for t in traj.turns])
    return traj


def tiny_model(seed: int = 0, vocab_size: int = 64) -> torch.nn.Module:
    """A randomly initialised 2-layer Llama (≈40k parameters) in eval mode."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    return LlamaForCausalLM(config).eval()


def synthetic_tasks(n: int = 3) -> list:
    from atrl.tasks.task import Task

    return [Task(id=f"synthetic/t{i}", suite="synthetic", name=f"t{i}", level=1, source=f"X = {i}\n")
            for i in range(n)]


def tiny_config(out_dir, **overrides):
    """A trainer config for the tiny random model and the synthetic scorer: 2 tasks × 4 episodes
    per step, episodes of two one-turn segments."""
    from atrl.rl.config import make_config

    values = dict(
        model="tiny-random:0",
        reward="synthetic",
        synthetic_targets="a",
        synthetic_saturation=4,
        steps=16,
        lr=2e-2,
        group_size=4,
        tasks_per_step=2,
        micro_batch_size=8,
        save_every=1000,
        out_dir=str(out_dir),
        agent=dict(
            max_turns=2,
            turns_per_segment=1,
            max_segments=2,
            context_budget=700,
            max_response_tokens=6,
            summary_tokens=4,
            platform="interpreter",
        ),
    )
    agent = overrides.pop("agent", None)
    values.update(overrides)
    if agent:
        values["agent"] = {**values["agent"], **agent}
    return make_config(values)
