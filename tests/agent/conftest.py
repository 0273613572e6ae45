"""Fakes for agent tests: a marker-scoring harness, a knowledge source and replay files."""

from __future__ import annotations

import json
from concurrent.futures import Future
from pathlib import Path

import pytest

from atrl.harness.verdict import Verdict, candidate_hash
from atrl.tasks.task import Task

GOOD = "GOOD_KERNEL"

TASK_SOURCE = '''import torch
import torch.nn as nn

N = 1024


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
'''


class MarkerHarness:
    """Scores a response 1.0 if it contains GOOD, 0.1 if it has a python block, else 0 (format)."""

    def __init__(self) -> None:
        self.submitted: list[tuple[str, str]] = []

    def submit(self, task: Task, response: str) -> Future:
        self.submitted.append((task.id, response))
        if GOOD in response:
            v = Verdict(task.id, candidate_hash(response), "fake", "cpu", "done", True, score=1.0,
                        feedback="Correct on all trials.")
        elif "```python" in response:
            v = Verdict(task.id, candidate_hash(response), "fake", "cpu", "correctness", False,
                        error_class="correctness:mismatch", message="max abs error 0.5", score=0.1,
                        feedback="Incorrect: max abs error 0.5 at index 3.")
        else:
            v = Verdict(task.id, candidate_hash(response), "fake", "cpu", "format", False,
                        error_class="format:no-code", message="no python block", score=0.0,
                        feedback="No python code block found.")
        fut: Future = Future()
        fut.set_result(v)
        return fut


class FakeKnowledge:
    def for_episode(self, task: Task) -> str:
        return f"Use tl.program_id and masks for {task.name}."

    def after_verdict(self, task: Task, verdict: Verdict) -> str:
        return "" if verdict.ok else f"Hint for {verdict.error_class}: check the offsets."


def make_task(name: str = "relu") -> Task:
    return Task(id=f"builtin/{name}", suite="builtin", name=name, level=1, source=TASK_SOURCE)


def attempt(i: int, good: bool = False) -> str:
    body = GOOD if good else f"attempt_{i}"
    return f"Attempt {i}: I launch one kernel.\n\n```python\n# {body}\nclass ModelNew: pass\n```"


@pytest.fixture
def attempt_text():
    """attempt_text(i, good=False) -> a response with one python block (GOOD marks a correct one)."""
    return attempt


@pytest.fixture(name="make_task")
def make_task_fixture():
    """make_task(name) -> a small relu-like Task with that name."""
    return make_task


@pytest.fixture
def task() -> Task:
    return make_task()


@pytest.fixture
def harness() -> MarkerHarness:
    return MarkerHarness()


@pytest.fixture
def knowledge() -> FakeKnowledge:
    return FakeKnowledge()


@pytest.fixture
def write_replay(tmp_path: Path):
    """write_replay(records) -> path of a replay JSONL holding them."""

    def write(records: list[dict], name: str = "replay.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return path

    return write
