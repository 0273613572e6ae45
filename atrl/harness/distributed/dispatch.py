"""One driver's routing of judge jobs over a fleet's actors, and the re-run of lost jobs.

A job is one cache key. Requests for a key already in flight from this driver wait for that
job (each waiter gets its own copy of the verdict), so a group of identical responses costs one
judging. Each actor takes at most as many jobs from this driver as it has workers — the rest
wait here, so no job queues behind a slow one on an actor while another actor idles (the cost:
one round trip, a few ms, between a worker's jobs), and an actor that dies takes only those with
it. The least-loaded actor gets the next job; among equals the key
decides (rendezvous hashing), so two drivers sending the same candidate tend to meet on one
actor, which judges it once.

When an actor dies or its node goes (Ray raises `RayActorError`), its jobs go back to the front
of the queue, marked to avoid it, and are sent to another actor; the lost actor is probed and
used again once Ray has restarted it. A job's verdict is delivered once: a late answer from an
actor thought lost is dropped. All state lives in one thread; Ray's callbacks only post events.
"""

from __future__ import annotations

import copy
import statistics
import threading
import time
import zlib
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from atrl.harness.sandbox.pool import PoolClosedError
from atrl.harness.verdict import Verdict

MAX_ATTEMPTS = 4  # sends of one job before its waiters get FleetLostError
PROBE_RETRY_S = 0.5


class FleetLostError(RuntimeError):
    """The fleet's actors kept dying (or are all gone) before the job could be judged."""


@dataclass
class Member:
    """One actor as this driver sees it."""

    index: int
    handle: Any
    capacity: int
    in_flight: int = 0
    state: str = "up"  # up | probing (lost, waiting for Ray's restart) | gone
    judged: int = 0
    lost_jobs: int = 0


@dataclass
class _Job:
    key: str
    task: Any
    code: str
    options: Any
    waiters: list[Future] = field(default_factory=list)
    avoid: set[int] = field(default_factory=set)
    attempts: int = 0
    sent_at: float = 0.0
    done: bool = False


@dataclass
class DispatchStats:
    """Counts since the dispatcher started. overhead_s: per judged job, the seconds between
    sending it and its answer here minus the seconds the actor spent on it (the Ray round trip:
    serialisation, network, scheduling)."""

    judged: int = 0
    joined: int = 0  # requests that waited for a job already in flight from this driver
    resent: int = 0
    overhead_s: list[float] = field(default_factory=list)
    actor_s: list[float] = field(default_factory=list)  # per judged job: seconds on the actor
    per_member: dict[int, int] = field(default_factory=dict)

    def median_overhead_ms(self) -> float | None:
        return 1000 * statistics.median(self.overhead_s) if self.overhead_s else None


class Dispatcher:
    """Sends jobs to `handles` (actors with an async `judge(key, task, code, options)` returning
    `(Verdict, seconds)` and a `describe()`), `workers[i]` being actor i's pool size.
    `lost_errors`: the exceptions saying an actor (or its node) is gone; `restarting_errors`:
    those of them that say it is coming back (a probe then asks again after `PROBE_RETRY_S`)."""

    def __init__(self, handles: Sequence[Any], workers: Sequence[int], lost_errors: tuple[type[BaseException], ...],
                 fleet_name: str = "", restarting_errors: tuple[type[BaseException], ...] = ()) -> None:
        self.members = [Member(i, h, capacity=w) for i, (h, w) in enumerate(zip(handles, workers, strict=True))]
        self.stats = DispatchStats()
        self._lost_errors = lost_errors
        self._restarting_errors = restarting_errors
        self._fleet_name = fleet_name
        self._queue: deque[_Job] = deque()
        self._running: dict[str, _Job] = {}  # key -> job queued or in flight
        self._events: list[tuple] = []
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="atrl-ray-dispatch", daemon=True)
        self._thread.start()

    # ---- public -------------------------------------------------------------------------
    def submit(self, key: str, task: Any, code: str, options: Any) -> Future[Verdict]:
        waiter: Future[Verdict] = Future()
        self._post(("submit", _Job(key, task, code, options, waiters=[waiter])))
        return waiter

    def close(self) -> None:
        """Stop dispatching; every waiting request gets `PoolClosedError`. The actors keep running."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join(timeout=10)
        for job in list(self._running.values()):
            self._fail(job, PoolClosedError("the Ray harness was closed"))

    # ---- the loop -----------------------------------------------------------------------
    def _post(self, event: tuple) -> None:
        with self._wake:
            if self._closed and event[0] == "submit":
                event[1].waiters[0].set_exception(PoolClosedError("the Ray harness was closed"))
                return
            self._events.append(event)
            self._wake.notify()

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._events and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                events, self._events = self._events, []
            for kind, *args in events:
                getattr(self, f"_on_{kind}")(*args)
            self._send_ready()

    def _on_submit(self, job: _Job) -> None:
        running = self._running.get(job.key)
        if running is not None:
            running.waiters.extend(job.waiters)
            self.stats.joined += 1
            return
        self._running[job.key] = job
        self._queue.append(job)

    def _on_landed(self, job: _Job, member: Member, answer: Future) -> None:
        member.in_flight -= 1
        error = answer.exception()
        if job.done:
            return  # answered already by another actor after this one was thought lost
        if error is None:
            verdict, actor_seconds = answer.result()
            member.judged += 1
            self.stats.judged += 1
            self.stats.per_member[member.index] = self.stats.per_member.get(member.index, 0) + 1
            self.stats.overhead_s.append(max(0.0, time.monotonic() - job.sent_at - actor_seconds))
            self.stats.actor_s.append(actor_seconds)
            self._deliver(job, verdict)
        elif isinstance(error, self._lost_errors):
            member.lost_jobs += 1
            self._probe(member)
            job.avoid.add(member.index)
            if job.attempts >= MAX_ATTEMPTS:
                self._fail(job, FleetLostError(f"fleet {self._fleet_name!r}: the actors judging this candidate "
                                               f"died {job.attempts} times (last: {error})"))
            else:
                self.stats.resent += 1
                self._queue.appendleft(job)
        else:  # the judge itself failed, as it would in a local pool
            self._fail(job, error)

    def _on_probed(self, member: Member, answer: Future) -> None:
        error = answer.exception()
        if isinstance(error, self._restarting_errors) and not self._closed:
            timer = threading.Timer(PROBE_RETRY_S, lambda: self._post(("reprobe", member)))
            timer.daemon = True
            timer.start()
            return
        member.state = "gone" if error is not None else "up"
        if all(m.state == "gone" for m in self.members):
            lost = FleetLostError(f"every actor of fleet {self._fleet_name!r} is gone; restart it (a new harness "
                                  "creates the missing actors) or check the cluster's nodes")
            while self._queue:
                self._fail(self._queue.popleft(), lost)

    # ---- routing ------------------------------------------------------------------------
    def _send_ready(self) -> None:
        while self._queue:
            job = self._queue[0]
            member = self._pick(job)
            if member is None:
                return
            self._queue.popleft()
            self._send(job, member)

    def _pick(self, job: _Job) -> Member | None:
        free = [m for m in self.members if m.state == "up" and m.in_flight < m.capacity]
        if not free:
            return None
        others = [m for m in free if m.index not in job.avoid]
        return min(others or free, key=lambda m: (m.in_flight, zlib.crc32(f"{m.index}:{job.key}".encode())))

    def _send(self, job: _Job, member: Member) -> None:
        job.attempts += 1
        job.sent_at = time.monotonic()
        member.in_flight += 1
        answer: Future
        try:
            answer = member.handle.judge.remote(job.key, job.task, job.code, job.options).future()
        except self._lost_errors as exc:
            answer = Future()
            answer.set_exception(exc)
        answer.add_done_callback(lambda done: self._post(("landed", job, member, done)))

    def _on_reprobe(self, member: Member) -> None:
        self._send_probe(member)

    def _probe(self, member: Member) -> None:
        """Ask a lost actor to describe itself until Ray has restarted it (up again) or says it
        will not (gone)."""
        if member.state != "up":
            return
        member.state = "probing"
        self._send_probe(member)

    def _send_probe(self, member: Member) -> None:
        try:
            answer = member.handle.describe.remote().future()
        except self._lost_errors as exc:
            answer = Future()
            answer.set_exception(exc)
        answer.add_done_callback(lambda done: self._post(("probed", member, done)))

    # ---- answers ------------------------------------------------------------------------
    def _deliver(self, job: _Job, verdict: Verdict) -> None:
        job.done = True
        self._running.pop(job.key, None)
        first, *others = job.waiters
        for waiter in others:  # each caller finishes (scores, annotates) its own copy
            waiter.set_result(copy.deepcopy(verdict))
        first.set_result(verdict)

    def _fail(self, job: _Job, error: BaseException) -> None:
        job.done = True
        self._running.pop(job.key, None)
        for waiter in job.waiters:
            if not waiter.done():
                waiter.set_exception(error)
