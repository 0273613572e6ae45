"""A test-only worker runner for the Ray tests: a candidate carrying `# ray-test sleep=S id=N`
sleeps S seconds, then is correct, with its id and the judging process in the message."""

from __future__ import annotations

import os
import re
import time

from atrl.harness.verdict import Verdict, candidate_hash

MARK = re.compile(r"# ray-test sleep=([\d.]+) id=(\d+)")


def marked(code: str, seconds: float, ident: int) -> str:
    """`code` carrying the mark this runner reads."""
    return f"{code}\n# ray-test sleep={seconds} id={ident}\n"


def run(task, code, options, report_stage, timing_lock) -> Verdict:
    report_stage("compile")
    match = MARK.search(code)
    seconds, ident = (float(match.group(1)), match.group(2)) if match else (0.0, "none")
    time.sleep(seconds)
    return Verdict(task_id=task.id, candidate_hash=candidate_hash(code), backend="interpreter", device="cpu",
                   stage="done", ok=True, message=f"id={ident} pid={os.getppid()}")
