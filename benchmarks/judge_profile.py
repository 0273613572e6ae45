"""Where one judgement's time goes: candidates of the KernelBench set judged one at a time.

For each candidate named with `--only`, the in-worker judge runs in this process, once to warm
up and once under cProfile (the functions with the most own time, and the correctness stage's
parts), then the same candidate is judged by a one-worker `Harness` (the path users take: worker sandbox, memory
budget) for its stage and part seconds. On a GPU the part clock synchronises the device at the
end of each part, so GPU time counts where it was queued; in the profile it shows up at the
reads that wait for the device (`tolist`, `item`, `synchronize`).

    python benchmarks/judge_profile.py --kernelbench PATH --only l1_relu_whole_file [--backend cuda]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernelbench_candidates import candidate_source, load_candidates, load_task  # noqa: E402


def profile_in_process(task, code: str, backend: str, preset: str | None, trials: int, top: int) -> dict:
    from atrl.harness.stages.judge import JudgeOptions, judge

    options = JudgeOptions(backend=backend, preset=preset, trials=trials)
    judge(task, code, options)  # warm: imports, device start, compile caches
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    verdict = judge(task, code, options)
    profiler.disable()
    wall = time.perf_counter() - start
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).strip_dirs().sort_stats("tottime").print_stats(top)
    return {"wall_s": round(wall, 2), "ok": verdict.ok, "error_class": verdict.error_class,
            "stage_seconds": verdict.stage_seconds,
            "correctness_seconds": verdict.correctness.seconds if verdict.correctness else {},
            "profile": text.getvalue()}


def judge_in_worker(task, code: str, backend: str, preset: str | None, trials: int) -> dict:
    import torch

    from atrl.harness import Harness

    if torch.cuda.is_available():  # this process's cached blocks would count as taken to the worker's admission
        torch.cuda.empty_cache()

    with Harness(backend=backend, workers=1, trials=trials, use_cache=False, preset=preset) as harness:
        start = time.perf_counter()
        verdict = harness.evaluate(task, code)
        wall = time.perf_counter() - start
    return {"wall_s": round(wall, 2), "ok": verdict.ok, "error_class": verdict.error_class,
            "stage_seconds": verdict.stage_seconds,
            "correctness_seconds": verdict.correctness.seconds if verdict.correctness else {}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernelbench", type=Path, required=True, help="root of a KernelBench checkout")
    parser.add_argument("--only", required=True, help="candidate names, comma-separated")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--preset", help="size preset (default: the tasks as written)")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--top", type=int, default=30, help="functions listed by own time")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    wanted = args.only.split(",")
    candidates = {c.name: c for c in load_candidates()}
    missing = [n for n in wanted if n not in candidates]
    if missing:
        parser.error(f"no candidate named {', '.join(missing)} in the set's manifest")
    results = {}
    for name in wanted:
        candidate = candidates[name]
        task, code = load_task(candidate, args.kernelbench), candidate_source(candidate, args.kernelbench)
        results[name] = {"in_process": profile_in_process(task, code, args.backend, args.preset, args.trials, args.top),
                         "worker": judge_in_worker(task, code, args.backend, args.preset, args.trials)}
        for where, result in results[name].items():
            print(f"## {name} ({where}): {result['wall_s']} s, ok={result['ok']} {result['error_class'] or ''}")
            print("stages:", json.dumps(result["stage_seconds"]))
            print("correctness parts:", json.dumps(result["correctness_seconds"]))
            if "profile" in result:
                print(result["profile"])
        sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
