"""Build the labelled query set of the knowledge-base benchmark: `benchmarks/data/kb_queries.jsonl`.

Two kinds of queries:
- `verdict`: broken candidates for builtin tasks are judged by the real harness
  (`Harness(backend="interpreter", workers=1)`); the verdict's class, stage and message are
  recorded with the label `expected` = the error-fix entry written for that mistake. A few CUDA-only
  failures (the interpreter cannot produce them) use the message text those errors print, marked
  `source: "cuda-message"`.
- `task`: every builtin task; `expected` = its family guide plus the examples of other tasks that
  share its first tag (the leave-own-solution-out rule applies when searching).

- `verdict` with `source: "ascend-harness"`: Ascend mistakes judged by the `ascend` backend
  (triton-ascend lowering + interpreter; needs `atrl setup ascend`), searched on platform ascend.

Run: `python benchmarks/kb_make_queries.py` (about a minute: each runtime candidate runs in the
Triton interpreter); `--ascend-only` replaces just the ascend rows of the existing file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

OUT = Path(__file__).parent / "data" / "kb_queries.jsonl"

BASE = '''import torch
import torch.nn as nn
import triton
import triton.language as tl
{imports}

@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, {arange})
    mask = {mask}
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    {store}


class ModelNew(nn.Module):
    def forward(self, x):
        y = {alloc}
        n = x.numel()
        {launch}
        return {ret}
'''
DEFAULTS = dict(imports="", arange="BLOCK", mask="offs < n", store="tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)",
                alloc="torch.empty_like(x)", launch="relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)",
                ret="y")


def relu(**changes: str) -> str:
    return BASE.format(**{**DEFAULTS, **changes})


# (expected entry, candidate source) for the builtin relu task.
CANDIDATES: list[tuple[str, str]] = [
    ("fix-no-code", "I would write a Triton kernel that applies max(x, 0) to every element."),
    ("fix-no-code", "Here is the plan:\n```\nrelu_kernel: load, maximum, store\n```\nthen launch it."),
    ("fix-syntax", relu(launch="relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024")),
    ("fix-syntax", relu().replace("    def forward(self, x):", "    def forward(self, x)")),
    ("fix-modelnew-signature", relu().replace("class ModelNew", "class MyModel")),
    ("fix-no-triton-kernel", relu().replace("@triton.jit\n", "")),
    ("fix-no-launch", relu(launch="relu_kernel(x, y, n, 1024)")),
    ("fix-no-launch", relu(launch="pass")),
    ("fix-pytorch-compute", relu(ret="torch.relu(x)")),
    ("fix-pytorch-compute", relu(ret="y * 2.0")),
    ("fix-pytorch-compute", relu(imports="import torch.nn.functional as F", ret="F.relu(y)")),
    ("fix-try-except", relu(launch="try:\n            relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)\n"
                                   "        except Exception:\n            y = x.clamp(min=0)")),
    ("fix-forbidden-runtime", relu(imports="import threading")),
    ("fix-forbidden-runtime", relu(imports="import subprocess\nsubprocess.run(['nvidia-smi'])")),
    ("fix-forbidden-runtime", relu(imports="LOG = open('log.txt', 'w')")),
    ("fix-forbidden-runtime", relu(imports="exec('z = 1')")),
    ("fix-forbidden-runtime", relu(imports="import inspect")),
    ("fix-forbidden-runtime", relu(imports="import os\nDEBUG = os.environ.get('KERNEL_DEBUG')")),
    ("fix-monkeypatch", relu(imports="torch.relu = lambda t: t")),
    ("fix-monkeypatch", relu(imports="torch.backends.cuda.matmul.allow_tf32 = True")),
    ("fix-cuda-stream-graph", relu(launch="s = torch.cuda.Stream()\n        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)")),
    ("fix-reference-access", relu().replace("class ModelNew(nn.Module)", "class ModelNew(Model)")),
    ("fix-compile-python", relu(launch="relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=BLOCK_SIZE)")),
    ("fix-compile-python", relu(launch="relu_kernel[(triton.cdiv(n, 1024),)](x, y, BLOCK=1024)")),
    ("fix-arange-constexpr", relu(arange="1000")),
    ("fix-arange-constexpr", relu().replace("BLOCK: tl.constexpr", "BLOCK")),
    ("fix-triton-compile", relu(store="tl.store(y_ptr + offs, tl.tanh(x), mask=mask)")),
    ("fix-modelnew-signature", relu().replace("def forward(self, x):", "def forward(self, x, scale):")),
    ("fix-output-shape-type", relu(alloc="torch.empty(x.numel() // 2, device=x.device)",
                                   launch="relu_kernel[(triton.cdiv(n // 2, 1024),)](x, y, n // 2, BLOCK=1024)")),
    ("fix-output-shape-type", relu(ret="[y]")),
    ("fix-store-dtype", relu(alloc="torch.empty(x.shape, device=x.device, dtype=torch.float64)")),
    ("fix-mismatch", relu(store="tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2.0, mask=mask)")),
    ("fix-out-of-bounds-mask", relu(mask="offs < n - 1")),
    ("fix-nan", relu(store="tl.store(y_ptr + offs, tl.maximum(x, 0.0) + tl.log(x) * 0.0, mask=mask)")),
    ("fix-precision", relu(store="tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 1.00002, mask=mask)")),
    ("fix-wide-inputs", relu(store="tl.store(y_ptr + offs, tl.where(x > 6.0, 0.0, tl.maximum(x, 0.0)), mask=mask)")),
    ("fix-input-mutation", relu(store="tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)\n"
                                      "    tl.store(x_ptr + offs, x * 0.0, mask=mask)")),
    ("fix-no-launch", relu(launch="if n < 0:\n            relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)")),
    ("fix-runtime-error", relu(alloc="torch.empty_like(x)\n        self.calls = getattr(self, 'calls', 0) + 1\n"
                                     "        assert self.calls < 2, 'second call'")),
    ("fix-timeout", relu(launch="while n > 0:\n            n = n + 1\n"
                                "        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)")),
    ("fix-out-of-memory", relu(alloc="torch.empty(1 << 40, device=x.device)")),
]

# Failures only a GPU produces: the text those errors print (not producible by the interpreter).
CUDA_MESSAGES: list[tuple[str, str, str, str]] = [
    ("fix-crash-illegal-access", "cuda:error", "correctness",
     "RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be "
     "asynchronously reported at some other API call"),
    ("fix-crash-illegal-access", "crash", "correctness", "worker died: signal SIGSEGV (segmentation fault)"),
    ("fix-precision", "correctness:precision", "correctness",
     "seed 1: precision downgrade: output has relative error 0.000312 against a float64 reference, above the "
     "bound 1e-05 for torch.float32 (computed in lower precision, e.g. fp16/bf16/TF32?)"),
    ("fix-profile-error", "profile:error", "profile", "RuntimeError: forward failed on the 12th timed call"),
    ("fix-pytorch-compute", "correctness:low-triton-share", "correctness",
     "Triton's share of the work is 12% (threshold 50%): PyTorch ops on the data path move 88% of the bytes "
     "the reference's own ops move — aten.mm (96.00 MiB, 88% of the reference's)"),
    ("fix-timed-output", "correctness:timed-output", "correctness",
     "the output of the last timed call differs from the reference: max abs error 1.2"),
    ("fix-dot-shape", "compile:triton", "compile",
     "at 22:14: AssertionError('All non-batch values in both first input shape ([64, 8]) and second input "
     "shape ([8, 64]) must be >= 16!')"),
    ("fix-dot-shape", "compile:triton", "compile",
     "at 18:15: AssertionError('First input shape ([32, 64]) and second input shape [32, 32] are not "
     "compatible for matmul (second index of first shape (64) must be equal to first index of second "
     "shape (32)')"),
]

FAMILY_GUIDES = {
    "matmul": "cuda-tl-dot", "softmax": "cuda-reductions-softmax", "reduction": "cuda-reductions-softmax",
    "loss": "cuda-reductions-softmax", "normalization": "cuda-normalization", "fusion": "cuda-fusion",
    "layout": "cuda-coalescing", "elementwise": "cuda-programming-model", "gather": "cuda-programming-model",
    "cumulative": "cuda-reductions-softmax", "block": "cuda-fusion",
}


def as_response(candidate: str) -> str:
    """A model-style answer: code goes in a python fence (plain prose stays as it is)."""
    return candidate if candidate.startswith(("I ", "Here")) else f"Here is the kernel.\n```python\n{candidate}```\n"


def verdict_rows() -> list[dict]:
    from atrl.harness.api import Harness
    from atrl.tasks.registry import get_task

    task = get_task("builtin/relu")
    rows = []
    with Harness(backend="interpreter", workers=1, use_cache=False,
                 stage_timeouts={"compile": 20, "correctness": 30, "profile": 30}) as harness:
        verdicts = harness.evaluate_many([(task, as_response(code)) for _, code in CANDIDATES])
    for (expected, _), verdict in zip(CANDIDATES, verdicts, strict=True):
        rows.append({"kind": "verdict", "source": "harness", "task": task.id, "expected": [expected],
                     "error_class": verdict.error_class, "stage": verdict.stage, "message": verdict.message,
                     "feedback": verdict.feedback})
    for expected, error_class, stage, message in CUDA_MESSAGES:
        rows.append({"kind": "verdict", "source": "cuda-message", "task": task.id, "expected": [expected],
                     "error_class": error_class, "stage": stage, "message": message, "feedback": ""})
    return rows


ASCEND_CANDIDATES_DIR = Path(__file__).resolve().parent.parent / "tests" / "backends" / "ascend_candidates"
# (expected entry, task, candidate source, size preset override) judged on the ascend backend.
ASCEND_CANDIDATES: list[tuple[str, str, str, dict | None]] = [
    ("fix-ascend-lowering-dtype", "relu", (ASCEND_CANDIDATES_DIR / "relu_fp64_sqrt.py").read_text(), None),
    ("fix-ascend-lowering-dot-precision", "matmul", (ASCEND_CANDIDATES_DIR / "matmul_tf32x3.py").read_text(), None),
    ("fix-ascend-grid-limit", "relu", (ASCEND_CANDIDATES_DIR / "relu_grid_too_large.py").read_text(), {"N": 70000}),
    ("fix-ascend-cuda-only", "relu", (ASCEND_CANDIDATES_DIR / "relu_inline_asm.py").read_text(), None),
    ("fix-ascend-cuda-only", "relu", relu(alloc='torch.empty(x.shape, device="cuda")'), None),
    ("fix-ascend-dtype", "relu", relu(store="tl.store(y_ptr + offs, tl.sqrt(x.to(tl.float64) ** 2).to(tl.float32), "
                                            "mask=mask)"), None),
    ("fix-ascend-dot", "relu", relu(store="tl.store(y_ptr + offs, tl.sum(tl.dot(x[:, None] * x[None, :], "
                                          "x[:, None] * x[None, :], allow_tf32=True), axis=1), mask=mask)"), None),
    ("fix-ascend-grid", "relu", relu(launch="relu_kernel[(100000,)](x, y, n, BLOCK=1024)"), None),
    ("fix-ascend-buffer", "relu", relu(launch="relu_kernel[(1,)](x, y, n, BLOCK=131072)"), None),
]


def ascend_rows() -> list[dict]:
    import dataclasses

    from atrl.harness.api import Harness
    from atrl.tasks.registry import get_task

    pairs = []
    for _, name, code, sizes in ASCEND_CANDIDATES:
        task = get_task(f"builtin/{name}")
        pairs.append((dataclasses.replace(task, presets={"small": sizes}) if sizes else task, as_response(code)))
    with Harness(backend="ascend", workers=1, use_cache=False,
                 stage_timeouts={"compile": 30, "correctness": 30, "profile": 30}) as harness:
        verdicts = harness.evaluate_many(pairs)
    return [{"kind": "verdict", "source": "ascend-harness", "task": f"builtin/{name}", "expected": [expected],
             "error_class": verdict.error_class, "stage": verdict.stage, "message": verdict.message,
             "feedback": verdict.feedback}
            for (expected, name, _, _), verdict in zip(ASCEND_CANDIDATES, verdicts, strict=True)]


def task_rows() -> list[dict]:
    from atrl.tasks.registry import load_suite

    tasks = load_suite("builtin").tasks
    rows = []
    for task in tasks:
        family = task.tags[0]
        siblings = [f"example/{t.name}" for t in tasks if t.solution and t.tags[0] == family and t.id != task.id]
        rows.append({"kind": "task", "source": "builtin", "task": task.id,
                     "expected": sorted({FAMILY_GUIDES[family], *siblings})})
    return rows


def main(argv: list[str] | None = None) -> None:
    import sys

    os.environ.setdefault("TRITON_INTERPRET", "1")
    if "--ascend-only" in (sys.argv[1:] if argv is None else argv):
        kept = [json.loads(line) for line in OUT.read_text().splitlines() if line.strip()]
        rows = [r for r in kept if r.get("source") != "ascend-harness"] + ascend_rows()
    else:
        rows = verdict_rows() + ascend_rows() + task_rows()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(row) + "\n" for row in rows))
    unexpected = [r for r in rows if r["kind"] == "verdict" and r["error_class"] is None]
    print(f"wrote {len(rows)} queries to {OUT.name}; {len(unexpected)} candidates unexpectedly passed")


if __name__ == "__main__":
    main()
