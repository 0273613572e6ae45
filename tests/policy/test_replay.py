"""Replay and reference policies, and the simple tokenizer they count with."""

from __future__ import annotations

import json

import pytest

from atrl.errors import UsageError
from atrl.policy.base import GenerationRequest, SamplingParams
from atrl.policy.replay import ReferencePolicy, ReplayPolicy
from atrl.policy.simple_tokenizer import SPECIAL_TOKENS, detokenize, render_chatml, tokenize
from atrl.tasks.task import Task

PARAMS = SamplingParams(max_tokens=100)


def req(task_id: str = "builtin/relu", turn: int = 0, sample: int = 0, kind: str = "turn") -> GenerationRequest:
    return GenerationRequest(messages=[], task_id=task_id, turn=turn, sample=sample, kind=kind)


@pytest.fixture
def replay_file(tmp_path):
    lines = [
        {"task_id": "builtin/relu", "turn": 0, "response": "generic zero"},
        {"task_id": "builtin/relu", "turn": 0, "sample": 1, "response": "sample one"},
        {"task_id": "builtin/relu", "turn": 1, "kind": "summary", "response": "my summary"},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_simple_tokenizer_round_trips_text_and_keeps_chat_markers_whole():
    for text in ["", "  ", "def f(x):\n\treturn x ** 2  # déjà vu ✓", render_chatml([], True)]:
        assert detokenize(tokenize(text)) == text
    ids = tokenize("<|im_start|>user\nhi<|im_end|>\n")
    assert ids[0] == SPECIAL_TOKENS["<|im_start|>"] and SPECIAL_TOKENS["<|im_end|>"] in ids
    assert tokenize("hello world") == tokenize("hello world")  # stable ids, no state
    assert 8 <= len(tokenize("the quick brown fox jumps over it")) <= 12  # ~3-4 characters a token


def test_replay_answers_by_task_turn_and_sample(replay_file):
    policy = ReplayPolicy(replay_file)
    gens = policy.generate([req(sample=0), req(sample=1), req(sample=5)], PARAMS)
    assert [g.text for g in gens] == ["generic zero", "sample one", "generic zero"]
    assert gens[0].token_ids == tokenize("generic zero") + [SPECIAL_TOKENS["<|im_end|>"]]
    assert gens[0].logprobs is None and gens[0].finish_reason == "stop"


def test_replay_summaries_come_from_summary_lines_or_are_empty(replay_file):
    policy = ReplayPolicy(replay_file)
    gens = policy.generate([req(turn=1, kind="summary"), req(turn=3, kind="summary")], PARAMS)
    assert [g.text for g in gens] == ["my summary", ""]


def test_replay_missing_turn_names_the_task_and_turn(replay_file):
    with pytest.raises(UsageError, match=r"no response for task 'builtin/relu', sample 0, turn 4"):
        ReplayPolicy(replay_file).generate([req(turn=4)], PARAMS)


def test_replay_default_answers_missing_turns(replay_file):
    gen = ReplayPolicy(replay_file, default="").generate([req(turn=4)], PARAMS)[0]
    assert gen.text == "" and gen.finish_reason == "stop"


def test_replay_cuts_long_responses_at_max_tokens(replay_file):
    gen = ReplayPolicy(replay_file).generate([req()], SamplingParams(max_tokens=1))[0]
    assert gen.finish_reason == "length" and len(gen.token_ids) == 1
    assert gen.text == detokenize(tokenize("generic zero")[:1])


def test_replay_rejects_a_malformed_file(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"task_id": "x"}\n')
    with pytest.raises(UsageError, match="record 1 is malformed"):
        ReplayPolicy(path)


def test_reference_policy_answers_with_the_task_solution():
    solved = Task(id="builtin/x", suite="builtin", name="x", level=1, source="", solution="class ModelNew:\n    pass\n")
    unsolved = Task(id="builtin/y", suite="builtin", name="y", level=1, source="")
    policy = ReferencePolicy([solved, unsolved])
    a, b = policy.generate([req("builtin/x"), req("builtin/y")], SamplingParams(max_tokens=1000))
    assert "```python\nclass ModelNew:\n    pass\n```" in a.text
    assert "```" not in b.text


def test_reference_policy_finds_builtin_tasks_by_id():
    gen = ReferencePolicy().generate([req("builtin/relu")], SamplingParams(max_tokens=10_000))[0]
    assert "```python" in gen.text and "ModelNew" in gen.text and "@triton.jit" in gen.text
