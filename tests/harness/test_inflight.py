"""Identical candidates submitted while one of them is being judged share that judgement
(`Harness.submit`): one worker job, a copy of the verdict each, marked cached."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from atrl.harness.api import Harness
from atrl.harness.verdict import Verdict
from atrl.tasks.registry import get_task


class HeldJudge(Harness):
    """A harness whose judgements wait until the test ends them."""

    def __init__(self, **options) -> None:
        super().__init__(backend="interpreter", workers=1, **options)
        self.jobs: list[tuple[str, Future[Verdict]]] = []

    def _judge(self, task, code, key):
        running: Future[Verdict] = Future()
        self.jobs.append((code, running))
        return running

    def end(self, index: int, error_class: str | None = None) -> None:
        code, running = self.jobs[index]
        verdict = Verdict.failed("builtin/relu", code, "interpreter", "cpu", "done" if error_class is None else "compile",
                                 error_class)
        verdict.ok = error_class is None
        running.set_result(verdict)


@pytest.fixture(scope="module")
def relu():
    return get_task("builtin/relu")


def test_identical_candidates_in_flight_take_one_judgement_and_each_gets_its_own_copy(relu, tmp_path):
    other = relu.solution + "\n# another candidate\n"
    with HeldJudge(cache_dir=tmp_path) as h:
        first, second, third = (h.submit(relu, relu.solution) for _ in range(3))
        different = h.submit(relu, other)
        assert len(h.jobs) == 2 and not first.done() and not second.done()
        h.end(0)
        h.end(1)
        verdicts = [f.result(timeout=5) for f in (first, second, third)]
        assert all(v.ok for v in verdicts) and different.result(timeout=5).ok
        assert [v.cached for v in verdicts] == [False, True, True]
        assert len({id(v) for v in verdicts}) == 3
        # once judged, an identical candidate is a cache hit: still no new job
        assert h.submit(relu, relu.solution).result(timeout=5).cached and len(h.jobs) == 2


def test_a_verdict_the_cache_does_not_keep_is_not_shared(relu, tmp_path):
    with HeldJudge(cache_dir=tmp_path) as h:
        leader, follower = h.submit(relu, relu.solution), h.submit(relu, relu.solution)
        h.end(0, "timeout")  # a loaded machine's verdict: the follower is judged itself
        assert leader.result(timeout=5).error_class == "timeout"
        assert len(h.jobs) == 2 and not follower.done()
        h.end(1)
        assert follower.result(timeout=5).ok and not follower.result().cached


def test_a_judgement_that_raises_fails_its_followers_too(relu, tmp_path):
    with HeldJudge(cache_dir=tmp_path) as h:
        leader, follower = h.submit(relu, relu.solution), h.submit(relu, relu.solution)
        h.jobs[0][1].set_exception(RuntimeError("pool closed"))
        for future in (leader, follower):
            with pytest.raises(RuntimeError, match="pool closed"):
                future.result(timeout=5)
        # the failed judgement no longer holds the key: the next submission is judged
        h.submit(relu, relu.solution)
        assert len(h.jobs) == 2


def test_without_the_cache_every_candidate_is_judged(relu, tmp_path):
    with HeldJudge(cache_dir=tmp_path, use_cache=False) as h:
        for _ in range(3):
            h.submit(relu, relu.solution)
        assert len(h.jobs) == 3


def test_a_judgement_that_cannot_start_releases_the_candidates_waiting_on_it(relu, tmp_path):
    class Refusing(HeldJudge):
        def _judge(self, task, code, key):
            raise RuntimeError("the pool is closed")

    with Refusing(cache_dir=tmp_path) as h:
        with pytest.raises(RuntimeError, match="pool is closed"):
            h.submit(relu, relu.solution)
        assert h._running == {}  # nothing left for a later identical candidate to wait on forever
