"""The dispatcher's routing, sharing and re-sending, with stand-in actors (no Ray needed)."""

from __future__ import annotations

import time
from concurrent.futures import Future

import pytest

from atrl.harness.distributed.dispatch import Dispatcher, FleetLostError
from atrl.harness.verdict import Verdict


class Lost(Exception):
    """Stands in for Ray's RayActorError."""


class Restarting(Lost):
    """Stands in for Ray's ActorUnavailableError (the actor is being restarted)."""


class _Method:
    def __init__(self, calls: list) -> None:
        self.calls = calls

    def remote(self, *args):
        answer: Future = Future()
        self.calls.append((args, answer))
        return type("Ref", (), {"future": lambda _self: answer})()


class FakeActor:
    """Records every call; the test answers them through the recorded futures."""

    def __init__(self) -> None:
        self.judge_calls: list = []
        self.describe_calls: list = []
        self.judge = _Method(self.judge_calls)
        self.describe = _Method(self.describe_calls)


def _verdict(key: str) -> Verdict:
    return Verdict(task_id="t", candidate_hash=key, backend="interpreter", device="cpu", stage="done", ok=True)


def _until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the dispatcher did not get there")
        time.sleep(0.005)


@pytest.fixture
def actors():
    return [FakeActor(), FakeActor()]


@pytest.fixture
def dispatcher(actors):
    d = Dispatcher(actors, workers=[1, 1], lost_errors=(Lost,), fleet_name="test", restarting_errors=(Restarting,))
    yield d
    d.close()


def test_requests_for_one_key_share_one_job_and_get_their_own_copy(dispatcher, actors):
    first, second = dispatcher.submit("k", None, "code", None), dispatcher.submit("k", None, "code", None)
    _until(lambda: sum(len(a.judge_calls) for a in actors) == 1)
    time.sleep(0.05)
    assert sum(len(a.judge_calls) for a in actors) == 1
    sent = next(a for a in actors if a.judge_calls).judge_calls[0]
    sent[1].set_result((_verdict("k"), 0.1))
    a, b = first.result(timeout=5), second.result(timeout=5)
    assert a == b and a is not b
    assert dispatcher.stats.joined == 1 and dispatcher.stats.judged == 1


def test_an_actor_takes_at_most_as_many_jobs_as_it_has_workers(actors):
    dispatcher = Dispatcher(actors, workers=[2, 2], lost_errors=(Lost,))
    futures = [dispatcher.submit(f"k{i}", None, "code", None) for i in range(6)]
    _until(lambda: sum(len(a.judge_calls) for a in actors) == 4)
    time.sleep(0.05)
    assert [len(a.judge_calls) for a in actors] == [2, 2]  # the other two wait on the driver
    args, answer = actors[0].judge_calls[0]
    answer.set_result((_verdict(args[0]), 0.1))
    _until(lambda: len(actors[0].judge_calls) == 3)
    assert futures[[f"k{i}" for i in range(6)].index(args[0])].result(timeout=5).candidate_hash == args[0]
    dispatcher.close()


def test_a_job_lost_with_its_actor_goes_to_another_and_a_late_answer_is_dropped(dispatcher, actors):
    waiter = dispatcher.submit("k", None, "code", None)
    _until(lambda: sum(len(a.judge_calls) for a in actors) == 1)
    lost_on = next(i for i, a in enumerate(actors) if a.judge_calls)
    other = actors[1 - lost_on]
    first_answer = actors[lost_on].judge_calls[0][1]
    first_answer.set_exception(Lost("actor died"))
    _until(lambda: len(other.judge_calls) == 1)  # re-sent, to the other actor
    assert len(actors[lost_on].describe_calls) == 1  # the lost one is probed
    other.judge_calls[0][1].set_result((_verdict("k"), 0.1))
    assert waiter.result(timeout=5).candidate_hash == "k"
    assert dispatcher.stats.resent == 1 and dispatcher.stats.judged == 1


def test_jobs_fail_clearly_when_every_actor_is_gone(dispatcher, actors):
    waiter = dispatcher.submit("k", None, "code", None)
    for _ in range(2):  # the job is lost on each actor in turn, and each probe says it is gone
        _until(lambda: sum(len(a.judge_calls) for a in actors) >= 1 and any(
            not call[1].done() for a in actors for call in a.judge_calls))
        pending = next(call for a in actors for call in a.judge_calls if not call[1].done())
        pending[1].set_exception(Lost("node gone"))
        _until(lambda: any(not c[1].done() for a in actors for c in a.describe_calls))
        for actor in actors:
            for _, probe in actor.describe_calls:
                if not probe.done():
                    probe.set_exception(Lost("gone for good"))
    with pytest.raises(FleetLostError, match="every actor of fleet 'test' is gone"):
        waiter.result(timeout=5)


def test_a_lost_actor_is_probed_until_its_restart_and_then_used_again(dispatcher, actors, monkeypatch):
    monkeypatch.setattr("atrl.harness.distributed.dispatch.PROBE_RETRY_S", 0.01)
    waiter = dispatcher.submit("k", None, "code", None)
    _until(lambda: sum(len(a.judge_calls) for a in actors) == 1)
    lost_on = next(i for i, a in enumerate(actors) if a.judge_calls)
    actors[lost_on].judge_calls[0][1].set_exception(Lost("actor died"))
    _until(lambda: len(actors[lost_on].describe_calls) == 1)
    actors[lost_on].describe_calls[0][1].set_exception(Restarting("the actor is restarting"))
    _until(lambda: len(actors[lost_on].describe_calls) == 2)  # asked again, not given up
    actors[lost_on].describe_calls[1][1].set_result(None)
    member = dispatcher.members[lost_on]
    _until(lambda: member.state == "up")
    actors[1 - lost_on].judge_calls[0][1].set_result((_verdict("k"), 0.1))
    assert waiter.result(timeout=5).candidate_hash == "k"
