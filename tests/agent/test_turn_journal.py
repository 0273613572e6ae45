"""The turn journal: a lockstep run interrupted at any generate call or any verdict, resumed from
its journal, ends with the trajectories of an uninterrupted run, and the policy is asked for
exactly the generate calls (seeds, prompts) the uninterrupted run made after that point."""

from __future__ import annotations

import hashlib
from concurrent.futures import Future

import pytest

from atrl.agent.config import AgentConfig
from atrl.agent.episode import run_episode_list
from atrl.agent.turn_journal import TurnJournal, prompt_digest
from atrl.errors import UsageError
from atrl.jsonio import to_jsonable
from atrl.policy.replay import scripted_generation
from atrl.policy.simple_tokenizer import SimpleTokenizerMixin


class Killed(BaseException):
    """Stands in for SIGKILL: nothing after it runs (BaseException, so no handler swallows it)."""


class SeededPolicy(SimpleTokenizerMixin):
    """Each response depends on the call's seed, the request's place in the batch and its prompt,
    like a sampling model's: a resumed run that issued another seed or batch would answer
    differently. Some responses are correct (GOOD), so episodes end at different rounds.
    `kill_at` raises `Killed` in that generate call (counted from 0 over this policy's calls)."""

    name = "seeded"

    def __init__(self, attempt_text, kill_at: int | None = None) -> None:
        self.attempt_text, self.kill_at = attempt_text, kill_at
        self.calls: list[tuple[int | None, list[str]]] = []

    def generate(self, requests, params):
        if len(self.calls) == self.kill_at:
            raise Killed
        self.calls.append((params.seed, [prompt_digest(r) for r in requests]))
        out = []
        for position, request in enumerate(requests):
            draw = int(hashlib.sha256(f"{params.seed}:{position}:{prompt_digest(request)}".encode()).hexdigest(), 16)
            if request.kind == "summary":
                text = f"Summary {draw % 1000}: tried {request.turn + 1} kernels."
            else:
                text = self.attempt_text(draw % 100, good=draw % 7 == 0)
            out.append(scripted_generation(text, params.max_tokens, self.eos_id))
        return out


class KillingHarness:
    """The marker harness (see conftest), except that the `kill_at`-th verdict it hands out raises
    `Killed` where the agent waits for it."""

    def __init__(self, inner, kill_at: int | None = None) -> None:
        self.inner, self.kill_at = inner, kill_at
        self.judged = 0

    def submit(self, task, response):
        if self.judged == self.kill_at:
            self.judged += 1
            future: Future = Future()
            future.set_exception(Killed())
            return future
        self.judged += 1
        return self.inner.submit(task, response)


CONFIG = AgentConfig(max_turns=5, turns_per_segment=2, max_segments=4, context_budget=100_000,
                     max_response_tokens=300, summary_tokens=60, target_score=1.0, seed=11)


@pytest.fixture
def episodes(make_task):
    return [(task, s) for task in (make_task("relu"), make_task("gelu")) for s in range(3)]


def _keys(episodes):
    return [(task.id, s) for task, s in episodes]


def _run(run, journal, policy=None, harness=None):
    """Trajectories (as JSON) of `run` = (episodes, knowledge, attempt_text, marker harness)."""
    episodes, knowledge, attempt_text, marker = run
    policy = policy or SeededPolicy(attempt_text)
    harness = harness or KillingHarness(marker)
    return to_jsonable(run_episode_list(policy, harness, episodes, CONFIG, knowledge, journal=journal)), policy


def _killed_then_resumed(path, run, *, call=None, verdict=None, torn=False):
    """Run until killed in generate call `call` or waiting for verdict `verdict`, (leave a torn
    last line), then resume: (trajectories, the generate calls the resumed run made, the turns it
    replayed, the turns it judged)."""
    episodes, _, attempt_text, marker = run
    with pytest.raises(Killed), TurnJournal(path, _keys(episodes)) as journal:
        _run(run, journal, SeededPolicy(attempt_text, kill_at=call), KillingHarness(marker, kill_at=verdict))
    if torn:
        with path.open("ab") as fh:
            fh.write(b'{"record":"verdict","call":')
    harness = KillingHarness(marker)
    with TurnJournal(path, _keys(episodes)) as journal:
        trajectories, policy = _run(run, journal, harness=harness)
        return trajectories, policy.calls, journal.replayed_turns, harness.judged


@pytest.fixture
def run(episodes, knowledge, attempt_text, harness):
    return episodes, knowledge, attempt_text, harness


def test_a_run_resumed_after_a_kill_at_any_call_or_verdict_equals_the_uninterrupted_run(tmp_path, run):
    with TurnJournal(tmp_path / "straight.jsonl", _keys(run[0])) as journal:
        straight, policy = _run(run, journal)
    calls = policy.calls
    kinds_of_stop = {t["stop_reason"] for t in straight}
    assert kinds_of_stop == {"target_score", "max_turns"} and any(t["segments"][0]["summary_text"] for t in straight)
    verdicts = sum(len(t["turns"]) for t in straight)
    assert (len(calls), verdicts) == (7, 27)  # five rounds of turns, two of summaries
    for call in range(len(calls)):
        resumed, remaining, replayed, judged = _killed_then_resumed(tmp_path / f"call-{call}.jsonl", run, call=call)
        assert resumed == straight, f"killed in generate call {call}"
        assert remaining == calls[call:], f"killed in generate call {call}"
        assert replayed + judged == verdicts, f"killed in generate call {call}"
    for verdict in range(verdicts):
        resumed, remaining, replayed, judged = _killed_then_resumed(tmp_path / f"verdict-{verdict}.jsonl", run,
                                                                    verdict=verdict, torn=verdict % 2 == 1)
        assert resumed == straight, f"killed waiting for verdict {verdict}"
        assert calls[len(calls) - len(remaining):] == remaining, f"killed waiting for verdict {verdict}"
        # every round before the one the kill hit was journaled whole
        assert replayed + judged == verdicts and replayed >= verdict - (len(run[0]) - 1), verdict


def test_without_a_journal_the_episodes_run_exactly_as_with_one(tmp_path, run):
    with TurnJournal(tmp_path / "turns.jsonl", _keys(run[0])) as journal:
        journaled, _ = _run(run, journal)
    plain, _ = _run(run, None)
    assert plain == journaled


def test_a_journal_of_other_prompts_is_refused(tmp_path, run):
    episodes, _, attempt_text, marker = run
    path = tmp_path / "turns.jsonl"
    with TurnJournal(path, _keys(episodes)) as journal:
        _run(run, journal)
    with TurnJournal(path, _keys(episodes)) as journal, pytest.raises(UsageError, match="other prompts"):
        _run((episodes, None, attempt_text, marker), journal)  # without kb text the prompts differ


def test_a_journal_of_other_episodes_starts_afresh(tmp_path, run):
    episodes, knowledge, attempt_text, marker = run
    path = tmp_path / "turns.jsonl"
    with TurnJournal(path, _keys(episodes)) as journal:
        _run(run, journal)
    with TurnJournal(path, _keys(episodes[:2])) as journal:
        _, policy = _run((episodes[:2], knowledge, attempt_text, marker), journal)
        assert journal.replayed_turns == 0 and policy.calls
