"""The profile stage's checks on every correct kernel the project has, on the CPU.

The profile stage runs only on timed backends (a GPU), yet its checks can reject: every timed
call gets rescaled inputs, three seeded timed calls and the last (a fresh draw) are compared with
the reference (`atrl.harness.stages.profile`). This runs that stage on Triton's interpreter with a
stand-in clock (every call "takes" 1 ms) for the correct candidates of the KernelBench set and the
builtin solutions at their `small` sizes, and reports each one that it rejects: a false rejection
that a GPU run would also make.

    TRITON_INTERPRET=1 python benchmarks/timed_checks_cpu.py --kernelbench PATH [--timed-calls 6]

Without `--kernelbench` only the builtin solutions run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from atrl.backends.interpreter import InterpreterBackend, benchmark_autotune_on_cpu  # noqa: E402
from atrl.harness.stages import profile  # noqa: E402
from atrl.harness.stages.correctness import CandidateRunner  # noqa: E402
from atrl.harness.stages.loading import (  # noqa: E402
    LoadedModels,
    build_models,
    import_candidate,
    load_task_module,
    write_candidate,
)
from atrl.harness.stages.trace import StageFailure  # noqa: E402
from atrl.tasks.registry import load_suite  # noqa: E402
from atrl.tasks.task import Task  # noqa: E402

PRESET = "small"


class StandInClock(InterpreterBackend):
    """The interpreter, timed by a clock that says 1 ms: the profile stage's checks run, its times mean nothing."""

    timed = True

    def time_call_ms(self, fn, flush=None) -> float:
        fn()
        return 1.0


def correct_kernels(kernelbench: Path | None) -> list[tuple[str, Task, str]]:
    """(name, task, source) of the builtin solutions and, with a checkout, the set's correct candidates."""
    items = []
    for task in load_suite("builtin").tasks:
        solution = Path(task.path).with_suffix(".solution.py") if task.path else None
        if solution is not None and solution.is_file():
            items.append((task.id, task, solution.read_text()))
    if kernelbench is not None:
        from kernelbench_candidates import candidate_source, load_candidates, load_task

        for candidate in load_candidates():
            if candidate.kind == "correct":
                items.append((candidate.name, load_task(candidate, kernelbench),
                              candidate_source(candidate, kernelbench)))
    return items


def run_profile_checks(task: Task, source: str, tag: str, timed_calls: int, seed: int) -> str | None:
    """None when the profile stage passes the kernel, else its failure class and message."""
    task_module = load_task_module(task, PRESET)
    path = write_candidate(source, tag)
    module = import_candidate(path)
    reference, model, init = build_models(task_module, module, 0, torch.float32, torch.device("cpu"), PRESET)
    models = LoadedModels(task_module, module, path, reference, model, init)
    backend = StandInClock()
    runner = CandidateRunner(model, backend, path)
    settings = profile.ProfileSettings(timed_calls=timed_calls, warmup_calls=1, seed=seed, compile_baseline=False,
                                       coverage_threshold=0.5, reference_mutates_inputs=task.reference_mutates_inputs)
    try:
        profile.profile_candidate(task, models, backend, runner, settings, torch.float32, set())
    except StageFailure as failure:
        return f"{failure.error_class}: {failure.message[:400]}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", type=Path, default=os.environ.get("ATRL_KERNELBENCH"))
    parser.add_argument("--timed-calls", type=int, default=6)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    if os.environ.get("TRITON_INTERPRET") != "1":
        print("error: set TRITON_INTERPRET=1 (the kernels run on Triton's interpreter)", file=sys.stderr)
        return 2
    profile.profiled_kernels = lambda *a: []  # no device profiler on the CPU
    benchmark_autotune_on_cpu()
    items = correct_kernels(args.kernelbench.resolve() if args.kernelbench else None)
    rejected = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)  # candidates are written to files (Triton reads kernel source)
        for index, (name, task, source) in enumerate(items):
            failure = run_profile_checks(task, source, f"k{index}", args.timed_calls, args.seed)
            if failure is not None:
                rejected.append((name, failure))
    print(f"## The profile stage's checks on {len(items)} correct kernels (interpreter, `{PRESET}` sizes, "
          f"{args.timed_calls} timed calls, stand-in clock; {time.monotonic() - start:.0f} s)\n")
    print(f"- rejected: {len(rejected)} of {len(items)}")
    for name, failure in rejected:
        print(f"  - {name}: {failure}")
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main())
