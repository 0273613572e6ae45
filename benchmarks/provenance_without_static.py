"""The run-time provenance check on its own: the adversarial cheats of the compute and caching
classes judged with the static stage skipped (`atrl.harness.stages.judge.judge` directly, in this
process), so only the recorded data path, the launch counter and the correctness trials decide.

    TRITON_INTERPRET=1 python benchmarks/provenance_without_static.py

Prints each cheat's expected class (with the static stage) and its class without it; exit
status 1 when one is accepted.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

ADVERSARIAL = Path(__file__).resolve().parents[1] / "tests" / "adversarial"
CLASSES = ("pytorch-compute", "partial-work", "caching", "host-compute")


def main() -> int:
    spec = importlib.util.spec_from_file_location("adversarial_runner", ADVERSARIAL / "runner.py")
    runner = importlib.util.module_from_spec(spec)
    sys.modules["adversarial_runner"] = runner
    spec.loader.exec_module(runner)
    from atrl.harness.stages.judge import JudgeOptions, judge
    from atrl.tasks.registry import get_task

    cases = [c for c in runner.load_cases(runner.CHEATS_DIR) if c.klass in CLASSES]
    sources = [c.path.read_text() for c in cases]
    options = JudgeOptions(backend="interpreter", preset="small", trials=2)
    print("| cheat | class | expected (with static) | without static |\n|---|---|---|---|")
    accepted = 0
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)  # the judge writes each candidate to a file in the working directory
        for case, source in zip(cases, sources, strict=True):
            task = runner.resolve_task(case.task)
            verdict = judge(get_task(task) if isinstance(task, str) else task, source, options)
            accepted += verdict.ok
            print(f"| {case.name} | {case.klass} | {' or '.join(case.expect)} | "
                  f"{'ACCEPTED' if verdict.ok else verdict.error_class} |", flush=True)
    print(f"\ncaught without the static stage: {len(cases) - accepted}/{len(cases)}")
    return 1 if accepted else 0


if __name__ == "__main__":
    sys.exit(main())
