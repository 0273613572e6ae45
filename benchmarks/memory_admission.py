"""Memory-aware judging at KernelBench sizes: verdicts, admitted concurrency and peak memory.

Judges correct Triton kernels for synthetic tasks shaped like KernelBench level 1 at its default
sizes (ReLU and row softmax over 4096 × 393216 fp32 = 6 GiB inputs, a mean over dimension 1 of
128 × 4096 × 4095, a matrix-scalar multiplication of 16384 × 65536 fp32 = 4 GiB), each submitted
`--copies` times, plus one candidate that allocates far beyond any allowance (`--no-hog` drops
it). Every correct kernel should pass; the hog should be `out-of-memory` with the numbers.
Prints per job: the task's footprint estimate, the allowance it ran under, whether it ran alone
or with the float64 bound in slices, its peak memory and verdict; then the device's admission
capacity, the most jobs admitted at once and the wall time.

On the interpreter the tasks run at their `small` preset (the same kernels, reduced sizes).

Examples:
  python benchmarks/memory_admission.py --backend cuda
  python benchmarks/memory_admission.py --backend interpreter --copies 2
  python benchmarks/memory_admission.py --plan-only --kernelbench PATH/TO/KernelBench/KernelBench
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from atrl.harness.api import Harness
from atrl.harness.sandbox.footprint import size_text
from atrl.harness.verdict import Verdict
from atrl.tasks.task import Task

HEADER = "import torch\nimport torch.nn as nn\n"

RELU = HEADER + '''
ROWS = 4096
COLS = 393216


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
'''

RELU_SOLUTION = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        return y
'''

# the same kernel, after hoarding a terabyte
RELU_HOG = RELU_SOLUTION.replace("        y = torch.empty_like(x)\n",
                                 "        self.hoard = torch.empty(1 << 40, dtype=torch.uint8, device=x.device)\n"
                                 "        y = torch.empty_like(x)\n")

SOFTMAX = HEADER + '''
ROWS = 4096
COLS = 393216


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
'''

SOFTMAX_SOLUTION = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    m = float("-inf")
    s = 0.0
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=float("-inf"))
        tl.store(y_row + cols, tl.exp(x - m) / s, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        softmax_kernel[(rows,)](x, y, cols, x.stride(0), BLOCK=4096)
        return y
'''

MEAN = HEADER + '''
BATCH = 128
DIM1 = 4096
DIM2 = 4095


class Model(nn.Module):
    def forward(self, x):
        return torch.mean(x, dim=1)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return []
'''

MEAN_SOLUTION = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mean_dim1_kernel(x_ptr, y_ptr, d1, d2, BLOCK: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < d2
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    base = x_ptr + b * d1 * d2
    for i in range(0, d1):
        acc += tl.load(base + i * d2 + cols, mask=mask, other=0.0)
    tl.store(y_ptr + b * d2 + cols, acc / d1, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        batch, d1, d2 = x.shape
        y = torch.empty((batch, d2), device=x.device, dtype=x.dtype)
        mean_dim1_kernel[(batch, triton.cdiv(d2, 256))](x, y, d1, d2, BLOCK=256)
        return y
'''

SCALE = HEADER + '''
M = 16384
N = 65536


class Model(nn.Module):
    def forward(self, A, s):
        return A * s


def get_inputs():
    return [torch.randn(M, N), 3.14]


def get_init_inputs():
    return []
'''

SCALE_SOLUTION = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(a_ptr, c_ptr, s, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) * s, mask=mask)


class ModelNew(nn.Module):
    def forward(self, A, s):
        A = A.contiguous()
        C = torch.empty_like(A)
        n = A.numel()
        scale_kernel[(triton.cdiv(n, 4096),)](A, C, s, n, BLOCK=4096)
        return C
'''

# name: (source at KernelBench's sizes, the interpreter's reduced sizes, correct kernel)
TASKS = {
    "19_ReLU": (RELU, {"ROWS": 64, "COLS": 4096}, RELU_SOLUTION),
    "23_Softmax": (SOFTMAX, {"ROWS": 16, "COLS": 8192}, SOFTMAX_SOLUTION),
    "48_Mean_reduction_over_a_dimension": (MEAN, {"BATCH": 4, "DIM1": 256, "DIM2": 255}, MEAN_SOLUTION),
    "5_Matrix_scalar_multiplication": (SCALE, {"M": 256, "N": 1024}, SCALE_SOLUTION),
}


def kernelbench_sized_tasks() -> dict[str, tuple[Task, str]]:
    """name -> (a builtin-style task object at KernelBench's default sizes, its correct kernel)."""
    return {name: (Task(id=f"kb-sized/{name}", suite="kb-sized", name=name, level=1, source=source,
                        presets={"small": small}), solution)
            for name, (source, small, solution) in TASKS.items()}


def _row(label: str, verdict: Verdict) -> str:
    memory = verdict.memory or {}
    peak = memory.get("peak_bytes")
    how = "alone" if memory.get("alone") else "shared"
    if memory.get("float64_sliced"):
        how += ", float64 sliced"
    outcome = "correct" if verdict.ok else verdict.error_class
    seconds = verdict.judge_seconds
    return (f"| {label} | {size_text(memory.get('estimate_bytes', 0))} | {size_text(memory.get('allowance_bytes', 0))} "
            f"| {how} | {size_text(peak) if peak is not None else '-'} | {outcome} | {seconds:.1f} |")


def print_plan(tasks: dict[str, tuple[Task, str]], preset: str | None, capacity_gib: float | None) -> None:
    """Each task's footprint at `preset` and its budget on a device of `capacity_gib` (timed)."""
    from atrl.harness.sandbox.admission import CAPACITY_MARGIN, plan_budget
    from atrl.harness.sandbox.meta_estimate import estimate_task

    capacity = int((capacity_gib or 139.8 * (1 - CAPACITY_MARGIN)) * (1 << 30))
    print(f"admission capacity {size_text(capacity)}, preset {preset or 'as written'}\n")
    print("| task | inputs | footprint (float64 whole) | (float64 sliced) | allowance | ran |")
    print("|---|---:|---:|---:|---:|---|")
    for name, (task, _) in tasks.items():
        footprint = estimate_task(task, preset, timed=True)
        budget = plan_budget(footprint, capacity)
        how = ("alone" if budget.alone else f"shared, {capacity // budget.allowance} at once") + (
            ", float64 sliced" if budget.float64_sliced else "")
        print(f"| {name} | {size_text(footprint.inputs)} | {size_text(footprint.peak)} | "
              f"{size_text(footprint.peak_sliced)} | {size_text(budget.allowance)} | {how} |")


OLD_CAP = int(0.25 * 139.8 * (1 << 30))  # the fixed per-worker share of an H200 this replaces


def print_kernelbench_plan(folder: Path, capacity_gib: float | None, top: int = 12) -> None:
    """How many KernelBench level-1/2 tasks measure on meta, exceed the old per-worker cap, or
    would run alone; then the largest footprints."""
    from atrl.harness.sandbox.admission import CAPACITY_MARGIN, plan_budget
    from atrl.harness.sandbox.meta_estimate import estimate_task
    from atrl.tasks.registry import load_suite

    capacity = int((capacity_gib or 139.8 * (1 - CAPACITY_MARGIN)) * (1 << 30))
    tasks = [t for t in load_suite("kernelbench", folder).tasks if t.level in (1, 2)]
    rows = []
    for task in tasks:
        footprint = estimate_task(task, None, timed=True)
        rows.append((task, footprint, plan_budget(footprint, capacity)))
    on_meta = sum(f.method == "meta" for _, f, _ in rows)
    over = sum(f.peak > OLD_CAP for _, f, _ in rows)
    alone = sum(b.alone for _, _, b in rows)
    print(f"{len(rows)} tasks: {on_meta} measured on meta, {over} above the old {size_text(OLD_CAP)} cap, "
          f"{alone} would run alone on {size_text(capacity)}\n")
    print("| task | footprint | allowance | ran |")
    print("|---|---:|---:|---|")
    for task, footprint, budget in sorted(rows, key=lambda r: -r[1].peak)[:top]:
        how = "alone" if budget.alone else "shared"
        print(f"| {task.id} | {size_text(footprint.peak)} | {size_text(budget.allowance)} | {how} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="auto", help="auto | cuda | interpreter")
    parser.add_argument("--preset", default=None,
                        help="size preset (default: KernelBench sizes on cuda, 'small' on the interpreter)")
    parser.add_argument("--copies", type=int, default=2, help="times each correct kernel is submitted")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--timed-calls", type=int, default=20)
    parser.add_argument("--memory-capacity-gib", type=float, default=None,
                        help="admit against this many GiB per device instead of its free memory")
    parser.add_argument("--no-hog", action="store_true", help="leave out the candidate that allocates 1 TiB")
    parser.add_argument("--json", type=Path, default=None, help="also write the verdicts' memory records here")
    parser.add_argument("--plan-only", action="store_true",
                        help="judge nothing: print each task's footprint (meta device) and the budget it would get "
                             "on a device of --memory-capacity-gib (default: an H200's 139.8 GiB less the margin)")
    parser.add_argument("--kernelbench", type=Path, default=None,
                        help="with --plan-only: plan every level-1/2 task of a KernelBench checkout (its KernelBench/ "
                             "folder) at its default sizes instead of the synthetic tasks")
    args = parser.parse_args(argv)

    if args.plan_only and args.kernelbench is not None:
        print_kernelbench_plan(args.kernelbench, args.memory_capacity_gib)
        return 0
    tasks = kernelbench_sized_tasks()
    if args.plan_only:
        print_plan(tasks, args.preset, args.memory_capacity_gib)
        return 0
    jobs = [(f"{name} #{i + 1}", task, solution) for name, (task, solution) in tasks.items()
            for i in range(args.copies)]
    if not args.no_hog:
        jobs.append(("19_ReLU hog (1 TiB)", tasks["19_ReLU"][0], RELU_HOG))
    capacity = int(args.memory_capacity_gib * (1 << 30)) if args.memory_capacity_gib else None
    with Harness(backend=args.backend, workers=args.workers, trials=args.trials, timed_calls=args.timed_calls,
                 preset=args.preset, use_cache=False, memory_capacity=capacity) as harness:
        start = time.perf_counter()
        verdicts = harness.evaluate_many([(task, code) for _, task, code in jobs])
        wall = time.perf_counter() - start
        stats = harness._pool.admission_stats() if harness._pool is not None else {}
        print(f"backend {harness.backend.name} ({harness.device}), preset {harness.preset or 'as written'}, "
              f"{harness.workers} workers, {args.trials} trials\n")
    print("| job | footprint estimate | allowance | ran | peak memory | verdict | job s |")
    print("|---|---:|---:|---|---:|---|---:|")
    for (label, _, _), verdict in zip(jobs, verdicts, strict=True):
        print(_row(label, verdict))
    print()
    for device, device_stats in stats.items():
        print(f"device {device}: admission capacity {size_text(device_stats['capacity_bytes'])}, "
              f"at most {device_stats['peak_admitted']} jobs admitted at once")
    correct = sum(v.ok for (label, _, _), v in zip(jobs, verdicts, strict=True) if "hog" not in label)
    expected = len(jobs) - (0 if args.no_hog else 1)
    print(f"correct kernels judged correct: {correct}/{expected}; wall {wall:.1f} s")
    for (label, _, _), verdict in zip(jobs, verdicts, strict=True):
        if not verdict.ok:
            print(f"\n{label}: {verdict.error_class}\n{verdict.message[:900]}")
    if args.json is not None:
        args.json.write_text(json.dumps([{"job": label, "ok": v.ok, "error_class": v.error_class, "memory": v.memory}
                                         for (label, _, _), v in zip(jobs, verdicts, strict=True)], indent=1))
    hog_ok = args.no_hog or verdicts[-1].error_class == "out-of-memory"
    return 0 if correct == expected and hog_ok else 1


if __name__ == "__main__":
    sys.exit(main())
