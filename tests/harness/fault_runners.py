"""A test-only worker runner with the judge's signature that misbehaves on request.

The candidate "code" is a command: `ok`, `ok-clocked` (with the worker's own stage seconds), `segfault`, `abort`, `hang`, `hang-correctness`,
`memory`, `exit`, `raise`, `print-huge`, `env` (returns the environment in the message),
`cuda-error`, `oom` (an out-of-memory verdict), `rlimit` (the soft RLIMIT_AS), `sleep S`, `cwd` (returns the working directory), `oom-unless-alone` (out-of-memory unless the
job holds the device exclusively), `oom-unless-allowance N` (out-of-memory under an allowance below N GiB), `oom-message TEXT` (an out-of-memory
verdict with TEXT, CUDA's wording, as its message), `oom-once PATH TEXT` (the same the first time,
when PATH does not exist yet; then it succeeds). Only the pool tests use it: the production
pool always runs the real judge.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

from atrl.harness.verdict import Verdict, candidate_hash


def run(task, code, options, report_stage, timing_lock) -> Verdict:
    report_stage("compile")
    command = code.strip()
    message, error_class = "", None
    if command == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif command == "abort":
        os.abort()
    elif command == "hang":
        while True:
            pass
    elif command == "hang-correctness":
        report_stage("correctness")
        while True:
            time.sleep(0.01)
    elif command == "memory":
        hoard = []
        while True:
            hoard.append(bytes(64 << 20))  # calloc: address space grows, little RAM is touched
    elif command == "exit":
        sys.exit(3)
    elif command == "raise":
        raise RuntimeError("judge blew up")
    elif command == "print-huge":
        chunk = "x" * (1 << 20)
        for _ in range(300):  # 300 MB through stdout
            print(chunk)
    elif command == "env":
        message = json.dumps(dict(os.environ))
    elif command == "cwd":
        message = os.getcwd()
    elif command == "oom-unless-alone":
        # out of memory unless the pool gave this job the device to itself (its lock is then a no-op)
        if type(timing_lock).__name__ != "NoTimingLock":
            error_class, message = "out-of-memory", "CUDA out of memory"
    elif command.startswith("oom-unless-allowance "):  # out of memory under an allowance below N GiB
        from atrl.harness.sandbox.memory_limits import current_budget

        budget = current_budget()
        if budget is None or budget.allowance < float(command.split()[1]) * (1 << 30):
            # the per-process cap refused a request of N GiB (more than the allowance)
            allowed = (budget.allowance if budget else 0) / (1 << 30)
            error_class, message = "out-of-memory", (f"CUDA out of memory. Tried to allocate {command.split()[1]}.00 GiB. "
                                                     f"{allowed:.2f} GiB allowed;")
    elif command == "rlimit":  # the soft address-space limit this job runs under
        import resource

        message = str(resource.getrlimit(resource.RLIMIT_AS)[0])
    elif command.startswith("sleep "):  # occupy the slot, so admission can be watched
        time.sleep(float(command.split()[1]))
    elif command.startswith("oom-once "):
        _, marker, text = command.split(" ", 2)
        if not os.path.exists(marker):
            open(marker, "w").close()
            error_class, message = "out-of-memory", text
    elif command.startswith("oom-message "):
        error_class, message = "out-of-memory", command.removeprefix("oom-message ")
    elif command == "oom":
        error_class, message = "out-of-memory", "CUDA out of memory"
    elif command == "cuda-error":
        error_class, message = "cuda:error", "CUDA error: an illegal memory access was encountered"
    report_stage("correctness")
    with timing_lock:
        pass
    # `ok-clocked`: like the real judge, the worker reports its own seconds per stage
    own_clock = {"compile": 0.01, "correctness": 0.01} if command == "ok-clocked" else {}
    return Verdict(task_id=task.id, candidate_hash=candidate_hash(code), backend="interpreter", device="cpu",
                   stage="done" if error_class is None else "correctness", ok=error_class is None,
                   error_class=error_class, message=message, stage_seconds=own_clock)
