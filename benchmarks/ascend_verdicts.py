"""What the `ascend` backend does on a CPU, measured: the builtin reference solutions judged by the
`ascend` backend (triton-ascend lowering + its interpreter) and by the stock `interpreter` backend
side by side, and kernels that stock Triton compiles for CUDA but triton-ascend rejects, with the
knowledge-base fix the agent would be shown.

Run (needs `atrl setup ascend`): `python benchmarks/ascend_verdicts.py [--workers 2] [--trials 2]`
→ prints markdown and writes `docs/benchmarks/ascend.md`. The adversarial suite runs through the
same backend with `python tests/adversarial/runner.py --backend ascend` (its tables go to the
same page by hand, with that command).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "docs" / "benchmarks" / "ascend.md"
CANDIDATES = ROOT / "tests" / "backends" / "ascend_candidates"
COMMAND = "python benchmarks/ascend_verdicts.py"
# Kernels that lower on CUDA but not on Ascend: (file, task, kernel, CUDA signature, constexprs).
PORTING_CASES = [
    ("relu_fp64_sqrt.py", "relu", "relu_kernel",
     {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr", "ACC": "constexpr"},
     {"BLOCK": 256, "ACC": "float64"}),
    ("matmul_tf32x3.py", "matmul", "matmul_kernel",
     {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
      "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32", "stride_cm": "i32",
      "stride_cn": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
      "PREC": "constexpr"},
     {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "PREC": "tf32x3"}),
    ("relu_inline_asm.py", "relu", "relu_kernel",
     {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256}),
]


def judge_solutions(backend: str, workers: int, trials: int) -> tuple[dict[str, object], float]:
    """Every builtin reference solution judged on `backend`: task id -> Verdict, and the wall seconds."""
    from atrl.harness.api import Harness
    from atrl.tasks.registry import load_suite

    tasks = [t for t in load_suite("builtin").tasks if t.solution and not t.skipped]
    start = time.monotonic()
    with Harness(backend=backend, workers=workers, trials=trials, use_cache=False) as harness:
        verdicts = harness.evaluate_many([(t, t.solution) for t in tasks])
    return {t.id: v for t, v in zip(tasks, verdicts, strict=True)}, time.monotonic() - start


def _judge_seconds(verdict) -> float:
    return verdict.judge_seconds


def solutions_section(workers: int, trials: int) -> str:
    ascend, ascend_s = judge_solutions("ascend", workers, trials)
    stock, stock_s = judge_solutions("interpreter", workers, trials)
    rows = ["| task | interpreter | ascend (lowering) | kernels lowered to linalg | ascend s | interpreter s |",
            "|---|---|---|---|---|---|"]
    for task_id, verdict in ascend.items():
        other = stock[task_id]
        note = next((f for f in verdict.flags if f.startswith("ascend:")), "")
        kernels = note.split("Ascend910B3: ", 1)[-1].split(";", 1)[0] if "Ascend910B3: " in note else "-"
        rows.append(f"| {task_id} | {_short(other)} | {_short(verdict)} | {kernels} | "
                    f"{_judge_seconds(verdict):.1f} | {_judge_seconds(other):.1f} |")
    agree = sum(ascend[t].ok == stock[t].ok for t in ascend)
    ascend_med = statistics.median(_judge_seconds(v) for v in ascend.values())
    stock_med = statistics.median(_judge_seconds(v) for v in stock.values())
    passed = sum(v.ok for v in ascend.values())
    head = (f"{len(ascend)} builtin reference solutions, {trials} trials each, {workers} workers. ascend: "
            f"{passed}/{len(ascend)} correct; the two backends agree on {agree}/{len(ascend)}. Median judge time "
            f"per solution (compile + correctness stages): ascend {ascend_med:.2f} s, interpreter {stock_med:.2f} s "
            f"(ratio {ascend_med / stock_med:.2f}); whole run: ascend {ascend_s:.0f} s, interpreter {stock_s:.0f} s.")
    return head + "\n\n" + "\n".join(rows)


def _short(verdict) -> str:
    return "ok" if verdict.ok else f"{verdict.error_class}"


def cuda_compiles(case: tuple) -> str:
    """Compile the case's kernel with stock Triton for an sm_90 GPU (no GPU needed): the stages made."""
    import importlib.util

    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    name, _, kernel_name, signature, constants = case
    spec = importlib.util.spec_from_file_location(f"porting_{kernel_name}", CANDIDATES / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    values = {k: getattr(tl, v) if isinstance(v, str) and hasattr(tl, v) else v for k, v in constants.items()}
    try:
        compiled = triton.compile(ASTSource(getattr(module, kernel_name), signature, constexprs=values),
                                  target=GPUTarget("cuda", 90, 32))
    except Exception as exc:  # noqa: BLE001 - reported in the table
        return f"fails: {type(exc).__name__}"
    return "compiles to " + ", ".join(k for k in ("ttir", "ptx", "cubin") if k in compiled.asm)


def porting_section() -> str:
    from atrl.harness.api import Harness
    from atrl.kb.inject import KnowledgeInjector
    from atrl.tasks.registry import get_task

    injector = KnowledgeInjector("ascend", budget_tokens=400)
    parts = []
    with Harness(backend="ascend", workers=1, trials=2, use_cache=False) as ascend, \
            Harness(backend="interpreter", workers=1, trials=2, use_cache=False) as stock:
        for case in PORTING_CASES:
            task = get_task(case[1])
            code = (CANDIDATES / case[0]).read_text()
            on_ascend, on_stock = ascend.evaluate(task, code), stock.evaluate(task, code)
            fix = injector.after_verdict(task, on_ascend).splitlines()
            parts.append(f"### {case[0]} (task builtin/{case[1]})\n\n"
                         f"- stock Triton, CUDA sm_90 target: {cuda_compiles(case)}\n"
                         f"- interpreter backend: {_short(on_stock)}\n"
                         f"- ascend backend: **{on_ascend.error_class}** at stage `{on_ascend.stage}`, line "
                         f"{on_ascend.line}\n\n```text\n{on_ascend.message.strip()}\n```\n\n"
                         f"- knowledge-base fix shown next turn: `{fix[0] if fix else '(none)'}`\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--trials", type=int, default=2)
    args = parser.parse_args(argv)
    from atrl.backends.ascend_env import require_env

    versions = require_env().versions
    text = "\n".join([
        "# The ascend backend on a CPU: measured verdicts",
        "",
        f"Command: `{COMMAND} --workers {args.workers} --trials {args.trials}` on {platform.machine()} "
        f"({platform.python_version()}), triton-ascend {versions.get('triton-ascend')}, torch {versions.get('torch')}; "
        "stock Triton in the caller's environment.",
        "",
        "## Builtin reference solutions: ascend (lowering) and interpreter side by side",
        "",
        solutions_section(args.workers, args.trials),
        "",
        "## Kernels stock Triton compiles for CUDA but triton-ascend rejects",
        "",
        porting_section(),
    ])
    REPORT.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
