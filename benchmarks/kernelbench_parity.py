"""KernelBench's own evaluator and the ATRL harness on the same candidates, side by side (CUDA only).

Candidates: the KernelBench candidate set (`tests/data/kernelbench_candidates`: correct kernels,
cheats, wrong kernels) plus builtin-style wrong variants of the first `--wrong-variants` correct
ones (every `tl.store` writes `value + 1`; see `atrl.tasks.mutations.plus_one_variant`).

For each candidate:
- **theirs**: `kernelbench.eval.eval_kernel_against_ref` from the checkout at `--kernelbench`
  (backend `triton`, float32, `--trials` correctness trials, `--perf-trials` timed trials), in a
  fresh Python process per candidate, as KernelBench's own scripts run it. Its `utils` module
  imports LLM clients (openai, litellm, dotenv) that evaluation never calls: this script puts stub
  modules in `sys.modules` before importing it, so they need not be installed.
- **ours**: `Harness(backend="cuda")` at the tasks' default sizes, cache off, `partial` policy
  (KernelBench's rules), one candidate at a time so each wall time is its own.

Verdicts are compared as accepted/rejected. Every disagreement is classified from the manifest's
ground truth (`classify`): *theirs wrong*, *ours wrong*, or *principled: <rule>* where the harness
applies a rule KernelBench does not (precision downgrade, wide inputs, torch.compile, input
mutation). Writes `parity.md` and `parity.json` under `--out`.

    python benchmarks/kernelbench_parity.py --kernelbench PATH --out docs/benchmarks/kernelbench-parity

Needs a CUDA GPU (KernelBench's evaluator asserts one); without it, exits 2 saying so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernelbench_candidates import (  # noqa: E402
    KERNELBENCH_ENV,
    SET_DIR,
    load_candidates,
    load_task,
    reference_source,
    with_wrong_variants,
)

# Modules KernelBench's utils imports at module level for LLM queries; evaluation never calls them.
LLM_CLIENT_STUBS: dict[str, tuple[str, ...]] = {
    "openai": ("OpenAI",),
    "litellm": ("completion",),
    "dotenv": ("load_dotenv",),
}
RESULT_MARK = "PARITY-RESULT "
AGREE = "agree"
THEIRS_WRONG = "theirs wrong"
OURS_WRONG = "ours wrong"
OUR_BACKEND = "cuda"  # the harness's backend for this comparison (tests substitute the interpreter)
# KernelBench's evaluator ran out of GPU memory: with several evaluations at once on one GPU (one
# holds ~43 GiB for a 6 GiB-input task), a fact about this run, not a verdict on the candidate
THEIRS_OOM = "evaluator-out-of-memory"


# ---- pure logic: labels, classification, tables ------------------------------------------------

@dataclass
class Side:
    """One evaluator's verdict: accepted or not, a short label, the wall seconds it took, and
    details worth keeping in the JSON (times, speedup, the first lines of the message)."""

    ok: bool
    label: str
    seconds: float
    detail: dict = field(default_factory=dict)


@dataclass
class Row:
    """One candidate judged by both evaluators."""

    name: str
    task: str
    kind: str
    should_pass: bool
    expect: tuple[str, ...]
    principle: str | None
    ours: Side
    theirs: Side

    @property
    def agree(self) -> bool:
        return self.ours.ok == self.theirs.ok

    @property
    def verdict_class(self) -> str:
        return classify(self)


def kernelbench_label(result: dict) -> tuple[bool, str]:
    """(accepted, label) from a `KernelExecResult` as a dict (or a worker failure record)."""
    if "worker_error" in result:
        return False, f"evaluator-error: {result['worker_error']}"
    if result.get("correctness"):
        return True, "correct"
    if not result.get("compiled"):
        return False, "compile-error"
    metadata = result.get("metadata") or {}
    if "out of memory" in str(metadata.get("runtime_error", "")).lower():
        return False, THEIRS_OOM
    if "runtime_error" in metadata:
        return False, "runtime-error"
    issue = str(metadata.get("correctness_issue", ""))
    if "shape" in issue.lower():
        return False, "shape-mismatch"
    if issue:
        return False, "output-mismatch"
    return False, "incorrect"


def classify(row: Row) -> str:
    """`agree`, or who is wrong by the manifest's ground truth. When the harness rejects what
    KernelBench accepts and the candidate carries a `principle` that its rejection class applies
    (one of its expected classes), the disagreement is `principled: <principle>`."""
    if row.agree:
        return AGREE
    if row.ours.ok:  # we accept, they reject
        return THEIRS_WRONG if row.should_pass else OURS_WRONG
    if row.principle and row.ours.label in row.expect:
        return f"principled: {row.principle}"
    return OURS_WRONG if row.should_pass else THEIRS_WRONG


def agreement_notes(row: Row) -> str:
    """What an agreement hides: both rejecting a correct kernel, or both accepting a bad one."""
    if not row.agree:
        return ""
    if row.should_pass and not row.ours.ok:
        return "both reject a correct kernel"
    if not row.should_pass and row.ours.ok:
        return "both accept a bad kernel"
    return ""


def summary(rows: list[Row]) -> dict:
    """Agreement count and rate, disagreements by class, and wall time per candidate on the
    candidates where both agree (median each side, and the ratio of their medians and sums). Rows
    where KernelBench's evaluator ran out of memory are left out and counted apart."""
    lost = [r for r in rows if r.theirs.label == THEIRS_OOM]
    rows = [r for r in rows if r.theirs.label != THEIRS_OOM]
    classes = Counter(classify(r) for r in rows)
    agreed = [r for r in rows if r.agree]
    result: dict = {
        "candidates": len(rows),
        "agree": len(agreed),
        "agreement_rate": round(len(agreed) / len(rows), 4) if rows else None,
        "disagreements": {k: v for k, v in sorted(classes.items()) if k != AGREE},
        "agreement_notes": dict(Counter(n for n in map(agreement_notes, rows) if n)),
        "evaluator_out_of_memory": len(lost),
    }
    if agreed:
        ours = [r.ours.seconds for r in agreed]
        theirs = [r.theirs.seconds for r in agreed]
        result["agreed_seconds"] = {
            "ours_median": round(statistics.median(ours), 3),
            "theirs_median": round(statistics.median(theirs), 3),
            "median_ratio_theirs_over_ours": round(statistics.median(theirs) / max(statistics.median(ours), 1e-9), 2),
            "total_ratio_theirs_over_ours": round(sum(theirs) / max(sum(ours), 1e-9), 2),
        }
        own = [own_seconds(r.ours) for r in agreed]
        if own != ours:  # the harness's side came from a set run whose workers queued for the GPU
            result["agreed_seconds"] |= {
                "ours_without_gpu_queue_median": round(statistics.median(own), 3),
                "median_ratio_without_gpu_queue": round(statistics.median(theirs) / max(statistics.median(own), 1e-9), 2),
                "total_ratio_without_gpu_queue": round(sum(theirs) / max(sum(own), 1e-9), 2),
            }
    return result


def own_seconds(side: Side) -> float:
    """The harness's wall seconds for a candidate less the time its worker queued for the GPU
    while other workers' candidates were timed (`device_wait`, recorded by a set run with several
    workers): the candidate's own judging, as if it had the GPU alone (an estimate; the
    `parity-alone` phase measures it)."""
    stages = side.detail.get("stage_seconds") or {}
    return max(side.seconds - float(stages.get("device_wait", 0.0)), 0.0)


def markdown(rows: list[Row], command: str, device: str) -> str:
    s = summary(rows)
    lines = [f"## KernelBench evaluator vs ATRL harness: {s['candidates']} candidates on {device}", "",
             f"Command: `{command}`", "",
             f"- agreement: {s['agree']}/{s['candidates']} ({100 * (s['agreement_rate'] or 0):.0f}%)"]
    for klass, count in s["disagreements"].items():
        lines.append(f"- disagreement, {klass}: {count}")
    for note, count in s["agreement_notes"].items():
        lines.append(f"- agreement, but {note}: {count}")
    if s["evaluator_out_of_memory"]:
        lines.append(f"- left out: {s['evaluator_out_of_memory']} candidates where KernelBench's evaluator ran out of "
                     "GPU memory beside the other evaluations (re-run with fewer --jobs and --resume)")
    if "agreed_seconds" in s:
        t = s["agreed_seconds"]
        lines.append(f"- wall s per candidate where both agree: ours median {t['ours_median']}, theirs median "
                     f"{t['theirs_median']}; theirs/ours {t['median_ratio_theirs_over_ours']}× (medians), "
                     f"{t['total_ratio_theirs_over_ours']}× (sums)")
        if "ours_without_gpu_queue_median" in t:
            lines.append(f"- the same less the harness's GPU queueing beside its other workers (`device_wait`): ours "
                         f"median {t['ours_without_gpu_queue_median']}; theirs/ours {t['median_ratio_without_gpu_queue']}× "
                         f"(medians), {t['total_ratio_without_gpu_queue']}× (sums)")
    lines += ["", "| candidate | task | kind | ours | theirs | class | ours s | theirs s |",
              "|---|---|---|---|---|---|---:|---:|"]
    for r in rows:
        ours = "accepted" if r.ours.ok else r.ours.label
        theirs = "accepted" if r.theirs.ok else r.theirs.label
        klass = classify(r) if not r.agree else (agreement_notes(r) or AGREE)
        lines.append(f"| {r.name} | {r.task} | {r.kind} | {ours} | {theirs} | {klass} | {r.ours.seconds:.1f} "
                     f"| {r.theirs.seconds:.1f} |")
    return "\n".join(lines) + "\n"


def write_reports(out: Path, rows: list[Row], command: str, device: str, jobs: int) -> None:
    (out / "parity.json").write_text(json.dumps({"device": device, "jobs": jobs, "summary": summary(rows),
                                                "rows": records(rows)}, indent=1))
    (out / "parity.md").write_text(markdown(rows, command, device))


def records(rows: list[Row]) -> list[dict]:
    return [asdict(r) | {"class": classify(r), "note": agreement_notes(r)} for r in rows]


def rows_from_records(data: list[dict]) -> list[Row]:
    """The rows `records` wrote (for `--resume`)."""
    return [Row(name=d["name"], task=d["task"], kind=d["kind"], should_pass=d["should_pass"],
                expect=tuple(d["expect"]), principle=d["principle"], ours=Side(**d["ours"]),
                theirs=Side(**d["theirs"])) for d in data]


# ---- KernelBench's side: one fresh process per candidate ---------------------------------------

def stub_llm_clients() -> None:
    """Stub modules for the LLM clients KernelBench's utils imports; calling one raises."""
    def unused(*args: object, **kwargs: object) -> None:
        raise RuntimeError("an LLM client was called during evaluation; the parity script stubs them out")

    for module_name, names in LLM_CLIENT_STUBS.items():
        module = types.ModuleType(module_name)
        for name in names:
            setattr(module, name, (lambda *a, **k: None) if name == "load_dotenv" else unused)
        sys.modules[module_name] = module


def import_kernelbench_eval(kernelbench: Path):
    """`kernelbench.eval` from the checkout's `src/`, with the LLM clients stubbed."""
    src = Path(kernelbench) / "src"
    if not (src / "kernelbench" / "eval.py").is_file():
        from atrl.errors import UsageError

        raise UsageError(f"{src / 'kernelbench' / 'eval.py'} does not exist",
                         "pass --kernelbench pointing at the root of a KernelBench checkout")
    stub_llm_clients()
    sys.path.insert(0, str(src))
    import kernelbench.eval as kb_eval

    return kb_eval


def worker_main() -> int:
    """Run one job from stdin with KernelBench's evaluator; print its result after RESULT_MARK."""
    job = json.loads(sys.stdin.read())
    import torch

    kb_eval = import_kernelbench_eval(Path(job["kernelbench"]))
    with tempfile.TemporaryDirectory() as build_dir:
        result = kb_eval.eval_kernel_against_ref(
            original_model_src=job["reference"], custom_model_src=job["candidate"], seed_num=42,
            num_correct_trials=job["trials"], num_perf_trials=job["perf_trials"], measure_performance=True,
            timing_method="cuda_event", build_dir=build_dir, device=0, backend="triton", precision=torch.float32)
    if result is None:  # KernelBench returns None when the candidate's build hit a lock or similar
        payload = {"worker_error": "eval_kernel_against_ref returned None"}
    else:
        # metadata may hold exception objects: dump to Python values, then let json stringify them
        payload = result.model_dump() if hasattr(result, "model_dump") else result.dict()
    print(RESULT_MARK + json.dumps(payload, default=str), flush=True)
    return 0


def run_theirs(candidate: str, reference: str, kernelbench: Path, trials: int, perf_trials: int,
               timeout: float) -> Side:
    job = {"kernelbench": str(kernelbench), "candidate": candidate, "reference": reference, "trials": trials,
           "perf_trials": perf_trials}
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker"], input=json.dumps(job),
                              capture_output=True, text=True, timeout=timeout)
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith(RESULT_MARK)]
        if lines:
            result = json.loads(lines[-1][len(RESULT_MARK):])
        else:
            tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-1:]) or f"exit {done.returncode}"
            result = {"worker_error": tail[:200]}
    except subprocess.TimeoutExpired:
        result = {"worker_error": f"timed out after {timeout:.0f} s"}
    ok, label = kernelbench_label(result)
    return Side(ok=ok, label=label, seconds=round(time.monotonic() - start, 2), detail=kernelbench_detail(result))


def kernelbench_detail(result: dict) -> dict:
    """Times (microseconds, as KernelBench reports them) and the correctness facts of a result."""
    metadata = result.get("metadata") or {}
    detail = {k: result[k] for k in ("runtime", "ref_runtime") if isinstance(result.get(k), (int, float))}
    detail |= {k: str(metadata[k])[:300] for k in ("correctness_trials", "max_difference", "excessive_speedup",
                                                  "correctness_issue", "runtime_error", "compilation_error")
               if k in metadata}
    if "worker_error" in result:
        detail["worker_error"] = result["worker_error"]
    return detail


# ---- the harness's side ------------------------------------------------------------------------

def run_ours(harness, task, source: str) -> Side:
    start = time.monotonic()
    verdict = harness.evaluate(task, source)
    detail = {"stage_seconds": verdict.stage_seconds, "speedup": verdict.speedup, "flags": verdict.flags,
              "message": (verdict.message or "")[:300]}
    return Side(ok=verdict.ok, label="accepted" if verdict.ok else str(verdict.error_class),
                seconds=round(time.monotonic() - start, 2), detail=detail)


def sides_from_set_run(path: Path) -> dict[str, Side]:
    """The harness's side of every candidate of a `kernelbench_set.py --json` file, by name."""
    sides = {}
    for r in json.loads(path.read_text()):
        detail = {"stage_seconds": r.get("stage_seconds"), "message": (r.get("message") or "")[:300],
                  "from": str(path.name)}
        sides[r["name"]] = Side(ok=r["ok"], label="accepted" if r["ok"] else str(r["error_class"]),
                                seconds=r["seconds"], detail=detail)
    return sides


def require_cuda() -> str | None:
    """The device name, or None when no CUDA GPU is visible."""
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        return worker_main()
    from atrl.errors import UsageError
    from atrl.harness.api import Harness
    from atrl.harness.select import gib_bytes

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", default=os.environ.get(KERNELBENCH_ENV),
                        help=f"KernelBench checkout (default ${KERNELBENCH_ENV})")
    parser.add_argument("--set", type=Path, default=SET_DIR)
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/kernelbench-parity"),
                        help="folder for parity.md and parity.json")
    parser.add_argument("--trials", type=int, default=5, help="correctness trials, each side")
    parser.add_argument("--perf-trials", type=int, default=100, help="timed calls, each side")
    parser.add_argument("--wrong-variants", type=int, default=10, help="builtin-style wrong variants to add")
    parser.add_argument("--only", help="comma-separated candidate names (before variants are added)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per candidate on KernelBench's side")
    parser.add_argument("--jobs", type=int, default=1,
                        help="KernelBench evaluations run at once, each in its own process (ours stay one at a time); "
                        "above 1 both sides' wall times include the contention. On a 140 GiB GPU use at most 2: one "
                        "evaluation of a 6 GiB-input task holds ~43 GiB (4 ran out of memory)")
    parser.add_argument("--memory-gib", type=float, default=None,
                        help="GiB per GPU our harness admits jobs against (default: its free memory)")
    parser.add_argument("--ours-first", action="store_true",
                        help="judge every candidate with the harness first (the GPU to itself; kept in OUT/ours.json), "
                        "then run KernelBench's evaluations without the harness beside them: no side's memory "
                        "or time is taken by the other")
    parser.add_argument("--ours-from", type=Path, default=None,
                        help="take the harness's verdicts from a benchmarks/kernelbench_set.py --json run on the same "
                        "candidates instead of judging them again (its seconds are that run's worker seconds, with "
                        "its workers sharing the GPU), for rows kept by --resume too; KernelBench's evaluations "
                        "then run alone")
    parser.add_argument("--resume", action="store_true",
                        help="keep the candidates already in OUT/parity.json and judge only the rest")
    args = parser.parse_args(argv)
    try:
        if not args.kernelbench:
            raise UsageError("no KernelBench checkout given", f"pass --kernelbench PATH or set ${KERNELBENCH_ENV}")
        kernelbench = Path(args.kernelbench).expanduser()
        import_kernelbench_eval(kernelbench)  # fail on a bad checkout before any GPU work
        device = require_cuda()
        if device is None:
            raise UsageError("no CUDA GPU is visible: KernelBench's evaluator runs on CUDA only",
                             "run this on a machine with an NVIDIA GPU (CPU judging: benchmarks/kernelbench_set.py)")
        candidates = load_candidates(args.set)
        if args.only:
            names = set(args.only.split(","))
            candidates = [c for c in candidates if c.name in names]
        pairs = with_wrong_variants(candidates, kernelbench, args.wrong_variants)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    saved = args.out / "parity.json"
    rows: list[Row] = rows_from_records(json.loads(saved.read_text())["rows"]) if args.resume and saved.is_file() else []
    rows = [r for r in rows if r.theirs.label != THEIRS_OOM]  # judged again: their memory, not the candidate
    done = {r.name for r in rows}
    command = "python benchmarks/kernelbench_parity.py " + " ".join(argv)
    todo = [(c, source) for c, source in pairs if c.name not in done]

    def harness():
        return Harness(backend=OUR_BACKEND, trials=args.trials, timed_calls=args.perf_trials, use_cache=False,
                       compute_policy="partial", memory_capacity=gib_bytes(args.memory_gib))

    ours_first: dict[str, Side] = {}
    if args.ours_from is not None:
        ours_first = sides_from_set_run(args.ours_from)
        missing = [c.name for c, _ in todo if c.name not in ours_first]
        if missing:
            hint = ("run benchmarks/kernelbench_set.py on the same set and --wrong-variants"
                    if not args.only else "with --only, variants are made from the first correct candidates of the "
                    "selection: pass --wrong-variants 0, or run benchmarks/kernelbench_set.py on the same selection")
            print(f"error: {args.ours_from} has no verdict for {len(missing)} candidates ({', '.join(missing[:3])} ...); "
                  f"{hint}", file=sys.stderr)
            return 2
        # the set run is the harness's side of every row, those kept by --resume too: KernelBench's
        # verdicts stay, ours follow the harness version that made the set run
        for row in rows:
            row.ours = ours_first.get(row.name, row.ours)
    elif args.ours_first:
        ours_file = args.out / "ours.json"
        if args.resume and ours_file.is_file():
            ours_first = {name: Side(**side) for name, side in json.loads(ours_file.read_text()).items()}
        with harness() as judge:
            for candidate, source in todo:
                if candidate.name not in ours_first:
                    ours_first[candidate.name] = run_ours(judge, load_task(candidate, kernelbench), source)
                    print(f"[ours] {candidate.name}: {ours_first[candidate.name].label}", flush=True)
                    ours_file.write_text(json.dumps({n: asdict(s) for n, s in ours_first.items()}, indent=1))
    with (nullcontext() if ours_first or not todo else harness()) as judge, ThreadPoolExecutor(max(1, args.jobs)) as pool:
        theirs_pending = [pool.submit(run_theirs, source, reference_source(c, kernelbench), kernelbench, args.trials,
                                      args.perf_trials, args.timeout) for c, source in todo]
        for i, ((candidate, source), pending) in enumerate(zip(todo, theirs_pending, strict=True), start=1):
            ours = ours_first.get(candidate.name) or run_ours(judge, load_task(candidate, kernelbench), source)
            theirs = pending.result()
            rows.append(Row(name=candidate.name, task=candidate.task, kind=candidate.kind,
                            should_pass=candidate.should_pass, expect=candidate.expect,
                            principle=candidate.principle, ours=ours, theirs=theirs))
            print(f"[{len(done) + i}/{len(done) + len(todo)}] {candidate.name}: ours {ours.label} ({ours.seconds:.1f} s), "
                  f"theirs {theirs.label} ({theirs.seconds:.1f} s) -> {classify(rows[-1])}", flush=True)
            # written after every candidate so an interrupted run keeps what it measured (--resume)
            write_reports(args.out, rows, command, device, args.jobs)
    write_reports(args.out, rows, command, device, args.jobs)  # kept rows may have a newer harness side
    print((args.out / "parity.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
