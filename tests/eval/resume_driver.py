"""`atrl eval` as a user runs it, in its own process, with a fake harness and a point where it
stops to be killed. The kill tests start it as a subprocess.

    python resume_driver.py PAUSE MARKER CALLS EVAL-ARGS...

PAUSE says where the process writes MARKER and then waits (forever) for its SIGKILL:
  none         never: the run finishes
  generate:K   inside generate call K (0-based), after the model has answered, before the answer
               is returned to the agent (so it is lost with the process)
  verdict:N    when the N-th verdict (0-based, counted over the process) is due: verdicts 0..N-1
               have arrived, N and later never do
  before:K     at the start of generate call K, before the model runs: every verdict of the
               rounds before it has been judged

CALLS gets a line for each generate call that reaches the policy (its seed, token cap and a
digest of every prompt) and for each verdict the harness hands out (task and response digest). The fake harness judges by a hash of the response text, so verdicts differ between responses
and a resumed run that generated other text than the uninterrupted run would show it.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from queue import Queue

from atrl.harness.verdict import Verdict, candidate_hash

OUTCOMES = [  # (stage, ok, error class, score)
    ("format", False, "format:no-code", 0.0),
    ("static", False, "static:no-triton-kernel", 0.0),
    ("compile", False, "compile:error", 0.05),
    ("correctness", False, "correctness:mismatch", 0.1),
    ("done", True, None, 1.0),
]


def wait_to_be_killed(marker: Path) -> None:
    marker.write_text("paused\n")
    while True:
        time.sleep(60)


def log_call(path: Path, entry: dict) -> None:
    with path.open("a") as log:
        log.write(json.dumps(entry) + "\n")


def hashed_verdict(task_id: str, response: str) -> Verdict:
    digest = hashlib.sha256(response.encode()).hexdigest()
    stage, ok, error_class, score = OUTCOMES[int(digest, 16) % len(OUTCOMES)]
    return Verdict(task_id, candidate_hash(response), "fake", "cpu", stage, ok, error_class=error_class,
                   message=f"fake verdict {digest[:8]}", score=score,
                   feedback=f"Fake feedback {digest[:12]} for a {stage} outcome.")


class HashHarness:
    """Stands in for `atrl.harness.api.Harness`: verdicts arrive one by one from a thread, in
    submission order; the `pause_at`-th (counted over the process) never arrives, and the pause
    begins once the agent has journaled the ones before it in `journal`."""

    def __init__(self, pause_at: int | None, marker: Path, journal: Path, calls_log: Path,
                 **_options: object) -> None:
        self.pause_at, self.marker, self.journal, self.calls_log = pause_at, marker, journal, calls_log
        self.count = 0
        self.journaled_before: int | None = None  # verdict records in the journal at the first submit
        self.queue: Queue = Queue()
        threading.Thread(target=self._resolve, daemon=True).start()

    def _journaled_verdicts(self) -> int:
        return self.journal.read_bytes().count(b'"record":"verdict"')

    def _resolve(self) -> None:
        while True:
            future, task_id, response = self.queue.get()
            if self.count == self.pause_at:
                while self._journaled_verdicts() < self.journaled_before + self.count:
                    time.sleep(0.01)
                wait_to_be_killed(self.marker)
            self.count += 1
            log_call(self.calls_log, {"judge": task_id, "response": candidate_hash(response)})
            future.set_result(hashed_verdict(task_id, response))

    def submit(self, task, response: str) -> Future:
        if self.journaled_before is None:
            self.journaled_before = self._journaled_verdicts()
        future: Future = Future()
        self.queue.put((future, task.id, response))
        return future

    def __enter__(self) -> HashHarness:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class PausingPolicy:
    """Delegates to a loaded policy; stops inside or before generate call `pause_call`."""

    def __init__(self, inner, pause_call: int | None, before: bool, marker: Path, calls_log: Path) -> None:
        self.inner, self.pause_call, self.before, self.marker = inner, pause_call, before, marker
        self.calls_log = calls_log
        self.name = inner.name
        self.calls = 0

    def generate(self, requests, params):
        from atrl.agent.turn_journal import prompt_digest

        call, self.calls = self.calls, self.calls + 1
        if call == self.pause_call and self.before:
            wait_to_be_killed(self.marker)
        log_call(self.calls_log, {"generate": params.seed, "max_tokens": params.max_tokens,
                                  "prompts": [prompt_digest(r) for r in requests]})
        generations = self.inner.generate(requests, params)
        if call == self.pause_call:
            wait_to_be_killed(self.marker)
        return generations

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def main(pause: str, marker: Path, calls_log: Path, eval_args: list[str]) -> int:
    import atrl.harness.api
    import atrl.policy
    from atrl.cli import main as atrl_main

    where, _, number = pause.partition(":")
    at = int(number) if number else None
    load_policy = atrl.policy.load_policy

    def pausing_load_policy(spec: str, **options):
        return PausingPolicy(load_policy(spec, **options), at if where in ("generate", "before") else None,
                             where == "before", marker, calls_log)

    atrl.policy.load_policy = pausing_load_policy
    journal = Path(eval_args[eval_args.index("--out") + 1]) / "turns.jsonl"
    atrl.harness.api.Harness = lambda **options: HashHarness(at if where == "verdict" else None, marker, journal,
                                                             calls_log, **options)
    return atrl_main(["eval", *eval_args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4:]))
