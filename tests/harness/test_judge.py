"""The in-worker judge (`atrl.harness.stages.judge.judge`): right solutions pass, each kind of broken
candidate is caught at its own failure class.

Every judge call runs in a child process (candidates are untrusted, and a CUDA error poisons a
process): the broken variants of one module share one child, each builtin solution gets its own.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from atrl.harness.feedback.failures import FAILURE_CLASSES
from atrl.tasks.registry import get_task
from atrl.tasks.task import Task

BUILTIN = Path(__file__).resolve().parents[2] / "atrl" / "tasks" / "builtin"
MARKER = "=== VERDICTS ==="

_CHILD = r"""
import dataclasses, json, os, sys, tempfile
from atrl.harness.stages.judge import JudgeOptions, judge
from atrl.tasks.task import ShapeCase, Task

jobs = json.load(sys.stdin)
verdicts = {}
for job in jobs:
    fields = dict(job["task"])
    fields["cases"] = [ShapeCase(**c) for c in fields.get("cases", [])]
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)
        verdict = judge(Task(**fields), job["code"], JudgeOptions(**job["options"]))
        os.chdir(os.path.dirname(workdir))
    verdicts[job["name"]] = dataclasses.asdict(verdict)
print(MARKER)
print(json.dumps(verdicts))
""".replace("MARKER", repr(MARKER))


def judge_in_child(jobs: list[dict], backend: str = "interpreter", timeout: float = 600) -> dict[str, dict]:
    """Judge each job {"name", "task": Task, "code", "options": dict} in one child process;
    returns name -> Verdict as a dict."""
    payload = [{**job, "task": dataclasses.asdict(job["task"])} for job in jobs]
    env = dict(os.environ, TRITON_INTERPRET="1" if backend == "interpreter" else "0")
    done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(payload), env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert MARKER in done.stdout, f"child failed (rc {done.returncode}):\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.split(MARKER, 1)[1])


def interpreter_options(**overrides) -> dict:
    return {"backend": "interpreter", "preset": "small", "trials": 2, **overrides}


def relu_candidate(kernel_body: str, forward_body: str | None = None, extra: str = "") -> str:
    """A ReLU candidate: `kernel_body` computes `y` from `x` (loaded under `mask`); `forward_body`
    replaces the default forward (allocate y, launch, return y)."""
    forward_body = forward_body or """
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
    """
    return (
        "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\n"
        "def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):\n"
        "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    mask = offsets < n_elements\n"
        "    x = tl.load(x_ptr + offsets, mask=mask)\n"
        + textwrap.indent(textwrap.dedent(kernel_body).strip(), "    ") + "\n"
        "    tl.store(y_ptr + offsets, y, mask=mask)\n\n\n"
        + textwrap.dedent(extra) +
        "class ModelNew(nn.Module):\n"
        "    def forward(self, x):\n"
        + textwrap.indent(textwrap.dedent(forward_body).strip(), "        ") + "\n"
    )


RELU_OK = "y = tl.maximum(x, 0.0)"


def tiny_task(name: str, draw: str, **fields) -> Task:
    """A one-input ReLU task built in the test, its input drawn by `draw` (e.g. "torch.rand(N)")."""
    source = textwrap.dedent(f"""
        import torch
        import torch.nn as nn

        N = 2048


        class Model(nn.Module):
            def forward(self, x):
                return torch.relu(x)


        def get_inputs():
            return [{draw}]


        def get_init_inputs():
            return []
    """)
    return Task(id=f"test/{name}", suite="test", name=name, level=1, source=source, **fields)


BROKEN: dict[str, tuple[str, dict]] = {}  # name -> (code, expectations), filled below


def _broken(name: str, code: str, error_class: str, task: str = "relu", **expect) -> None:
    BROKEN[name] = (code, {"error_class": error_class, "task": task, **expect})


_broken("wrong_value", relu_candidate("y = tl.maximum(x, 0.0) + 1.0"), "correctness:mismatch")
_broken("wrong_shape", relu_candidate(RELU_OK, """
    y = torch.empty_like(x)
    n = x.numel()
    relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y.view(-1, 64)
"""), "correctness:shape")
_broken("wrong_dtype", relu_candidate(RELU_OK, """
    y = torch.empty(x.shape, dtype=torch.float64)
    n = x.numel()
    relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y
"""), "correctness:dtype")
# the grid misses the tail: 4096 elements, 4 programs stepping by 1000 (each covering 1024)
# leave elements 4024.. unwritten (NaN when the CPU allocator hands back the poisoned block,
# else stale memory: CPU poisoning is best effort)
_broken("tail_not_written", relu_candidate(RELU_OK, """
    y = torch.empty_like(x)
    n = x.numel()
    relu_kernel[(n // 1000,)](x, y, n, BLOCK=1024)
    return y
""").replace("offsets = tl.program_id(0) * BLOCK", "offsets = tl.program_id(0) * 1000"),
        "correctness:mismatch|correctness:nan", first_index_from=4024)
_broken("nan_output", relu_candidate("y = tl.maximum(x, 0.0) + tl.sqrt(x * 0.0 - 1.0)"), "correctness:nan")
_broken("stale_output_buffer", relu_candidate(RELU_OK, """
    y = torch.empty_like(x)
    n = x.numel()
    relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    if getattr(self, "cached", None) is None:
        self.cached = y
    return self.cached
"""), "correctness:nan")
_broken("input_mutation", relu_candidate(RELU_OK, """
    n = x.numel()
    relu_kernel[(triton.cdiv(n, 1024),)](x, x, n, BLOCK=1024)
    return x
"""), "correctness:input-mutation")
_broken("decoy_kernel_never_launched", relu_candidate(RELU_OK, """
    y = torch.empty_like(x)
    n = x.numel()
    if n < 0:
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return x.clamp(min=0)
"""), "correctness:no-launch")
_broken("identity_relu_on_nonnegative_inputs", relu_candidate("y = x"), "correctness:wide-inputs", task="rand")
_broken("fp16_compute_of_fp32_task",
        relu_candidate("y = tl.maximum(x.to(tl.float16), 0.0).to(tl.float32)"),
        "correctness:precision", task="loose")
_broken("undefined_name_in_kernel", relu_candidate("y = tl.maximum(x, undefined_name)"), "compile:triton",
        line_of="undefined_name", says="undefined_name")
_broken("python_syntax_error", relu_candidate("y = tl.maximum(x, 0.0))"), "compile:error", line_of="0.0))")
_broken("forward_signature", relu_candidate(RELU_OK, "return x", extra="").replace(
    "def forward(self, x):", "def forward(self, x, scale):"), "compile:signature")
_broken("init_signature", relu_candidate(RELU_OK).replace(
    "class ModelNew(nn.Module):\n", "class ModelNew(nn.Module):\n    def __init__(self, size):\n"
    "        super().__init__()\n\n"), "compile:signature")
_broken("error_in_forward", relu_candidate(RELU_OK, "return x.nonexistent_method()"), "compile:error",
        line_of="nonexistent_method", says="nonexistent_method")


def multi_case_task() -> Task:
    """A ReLU task in the NPUKernelBench form: two shape cases from get_input_groups()."""
    task = tiny_task("relu_cases", "torch.randn(N)", multi_case=True)
    task.source += "\n\ndef get_input_groups():\n    return [[torch.randn(1024)], [torch.randn(3000)]]\n"
    return task


# right on the first case (1024 elements), wrong past element 2048 of the second
_broken("wrong_on_second_case_only", relu_candidate("y = tl.where(offsets < 2048, tl.maximum(x, 0.0), x)"),
        "correctness:mismatch", task="cases", says="case 1")


def _task(kind: str) -> Task:
    if kind == "cases":
        return multi_case_task()
    if kind == "rand":
        return tiny_task("relu_rand", "torch.rand(N)")
    if kind == "loose":  # KernelBench-style fp32 tolerance 1e-2: allclose alone lets fp16 through
        return tiny_task("relu_loose", "torch.randn(N)", atol=1e-2, rtol=1e-2)
    return get_task("builtin/relu")


@pytest.fixture(scope="module")
def broken_verdicts() -> dict[str, dict]:
    jobs = [{"name": name, "task": _task(expect["task"]), "code": code, "options": interpreter_options()}
            for name, (code, expect) in BROKEN.items()]
    jobs.append({"name": "relu_solution", "task": get_task("builtin/relu"),
                 "code": get_task("builtin/relu").solution, "options": interpreter_options()})
    jobs.append({"name": "relu_solution_cases", "task": multi_case_task(),
                 "code": get_task("builtin/relu").solution, "options": interpreter_options()})
    jobs.append({"name": "relu_solution_rand", "task": _task("rand"),
                 "code": get_task("builtin/relu").solution, "options": interpreter_options()})
    return judge_in_child(jobs)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_candidate_is_caught_at_its_failure_class(broken_verdicts: dict, name: str) -> None:
    code, expect = BROKEN[name]
    verdict = broken_verdicts[name]
    assert not verdict["ok"]
    assert verdict["error_class"] in expect["error_class"].split("|"), verdict["message"]
    assert verdict["error_class"] in FAILURE_CLASSES
    assert verdict["stage"] == verdict["error_class"].split(":")[0]
    assert verdict["timing"] is None
    if "line_of" in expect:  # the candidate line holding this text is named, with its code
        line = next(i for i, text in enumerate(code.splitlines(), 1) if expect["line_of"] in text)
        assert verdict["line"] == line, verdict["message"]
        assert code.splitlines()[line - 1].strip() in verdict["message"]
    if "says" in expect:
        assert expect["says"] in verdict["message"]
    if "first_index_from" in expect:
        assert verdict["correctness"]["first_mismatch_index"][0] >= expect["first_index_from"]


def test_failure_messages_hold_no_harness_or_library_frames(broken_verdicts: dict) -> None:
    for name in ("undefined_name_in_kernel", "python_syntax_error", "error_in_forward", "forward_signature"):
        message = broken_verdicts[name]["message"]
        assert message, name
        for leak in ("site-packages", "atrl/harness", "Traceback", "/tmp/"):
            assert leak not in message, (name, message)


def test_mismatch_reports_errors_share_and_first_index(broken_verdicts: dict) -> None:
    verdict = broken_verdicts["wrong_value"]
    stats = verdict["correctness"]
    assert stats["max_abs_error"] == pytest.approx(1.0)
    assert stats["mismatch_fraction"] == pytest.approx(1.0)
    assert stats["first_mismatch_index"] == [0]
    assert "max abs error 1" in verdict["message"] and "100.00% of elements" in verdict["message"]


def test_precision_failure_names_the_downgrade(broken_verdicts: dict) -> None:
    verdict = broken_verdicts["fp16_compute_of_fp32_task"]
    assert "precision downgrade" in verdict["message"]
    assert verdict["correctness"]["relative_error_vs_fp64"] > 1e-5


def test_relu_solution_is_correct_without_timing_on_the_interpreter(broken_verdicts: dict) -> None:
    verdict = broken_verdicts["relu_solution"]
    assert verdict["ok"] and verdict["stage"] == "done", verdict["message"]
    assert verdict["error_class"] is None and verdict["timing"] is None
    stats = verdict["correctness"]
    assert stats["trials"] == stats["passed"] == 4  # 2 task draws + 2 wide draws
    assert stats["relative_error_vs_fp64"] == 0.0
    assert set(verdict["stage_seconds"]) == {"compile", "correctness"}
    assert {"torch", "triton", "python"} <= set(verdict["versions"])
    assert verdict["backend"] == "interpreter"


def test_the_correctness_stage_says_where_its_time_went(broken_verdicts: dict) -> None:
    verdict = broken_verdicts["relu_solution"]
    parts = verdict["correctness"]["seconds"]
    assert {"inputs", "reference", "float64", "candidate", "compare", "provenance", "same-storage"} <= set(parts)
    assert all(v >= 0 for v in parts.values()) and parts["candidate"] > 0
    assert sum(parts.values()) <= verdict["stage_seconds"]["correctness"] + 1e-3
    failed = broken_verdicts["fp16_compute_of_fp32_task"]["correctness"]["seconds"]
    assert "diagnosis" in failed and "same-storage" not in failed  # it failed its first trial


def test_real_relu_passes_the_wide_trials_of_a_nonnegative_task(broken_verdicts: dict) -> None:
    verdict = broken_verdicts["relu_solution_rand"]
    assert verdict["ok"], verdict["message"]
    assert verdict["correctness"]["skipped"] == []


def test_multi_case_task_passes_when_every_case_passes(broken_verdicts: dict) -> None:
    verdict = broken_verdicts["relu_solution_cases"]
    assert verdict["ok"] and verdict["stage"] == "done", verdict["message"]
    assert verdict["correctness"]["passed"] == 4


def test_wide_trial_is_skipped_and_recorded_where_the_reference_is_not_finite() -> None:
    task = tiny_task("log_positive", "torch.rand(N) + 0.5")
    task.source = task.source.replace("torch.relu(x)", "torch.log(x)")
    code = relu_candidate("y = tl.log(x)")
    verdict = judge_in_child([{"name": "log", "task": task, "code": code, "options": interpreter_options()}])["log"]
    assert verdict["ok"], verdict["message"]
    stats = verdict["correctness"]
    assert len(stats["skipped"]) == 2 and all("not finite" in s for s in stats["skipped"])
    assert stats["passed"] == 2 and stats["trials"] == 4


def _solutions() -> dict[str, int]:
    """Builtin task id -> level, for every task with a reference solution."""
    found = {}
    for path in sorted(BUILTIN.glob("level*/*.solution.py")):
        found[f"builtin/{path.name[: -len('.solution.py')]}"] = int(path.parent.name[len("level"):])
    return found


def _solution_tasks() -> list:
    return [pytest.param(task_id, marks=[pytest.mark.slow] if level >= 2 else [], id=task_id.split("/")[1])
            for task_id, level in _solutions().items()]


@functools.cache
def _solution_verdicts(level: int) -> dict[str, dict]:
    """The verdicts of one level's solutions, judged one after another in one child process (as a
    pool worker judges its jobs): the child's start, most of a lone judgement, is paid once."""
    jobs = []
    for task_id, task_level in _solutions().items():
        if task_level == level:
            task = get_task(task_id)
            assert task.solution is not None
            jobs.append({"name": task_id, "task": task, "code": task.solution, "options": interpreter_options()})
    return judge_in_child(jobs)


@pytest.mark.parametrize("task_id", _solution_tasks())
def test_builtin_solution_is_judged_correct_on_the_interpreter(task_id: str) -> None:
    verdict = _solution_verdicts(_solutions()[task_id])[task_id]
    assert verdict["ok"] and verdict["stage"] == "done", f"{verdict['error_class']}: {verdict['message']}"
    assert verdict["timing"] is None


# --- the cuda path (run on a GPU machine) ---

def cuda_options(**overrides) -> dict:
    return {"backend": "cuda", "preset": None, "trials": 2, "timed_calls": 20, "warmup_calls": 3, **overrides}


@pytest.mark.gpu
def test_relu_solution_is_timed_with_kernels_and_coverage_on_cuda() -> None:
    task = get_task("builtin/relu")
    verdict = judge_in_child([{"name": "relu", "task": task, "code": task.solution, "options": cuda_options()}],
                             backend="cuda")["relu"]
    assert verdict["ok"] and verdict["stage"] == "done", verdict["message"]
    timing = verdict["timing"]
    assert timing["speedup"] > 0 and timing["candidate_ms"] > 0 and timing["reference_ms"] > 0
    assert timing["kernels"], "the profiled call listed no kernels"
    assert any(k["triton"] and k["name"].startswith("relu_kernel") for k in timing["kernels"])
    assert timing["coverage"] is not None and timing["coverage"] > 0.5
    assert 0 < timing["coverage_seconds"] < verdict["stage_seconds"]["profile"]
    assert set(verdict["stage_seconds"]) == {"compile", "correctness", "profile"}
    assert "cuda" in verdict["versions"]


@pytest.mark.gpu
def test_output_cached_after_the_correctness_trials_fails_the_timed_output_check_on_cuda() -> None:
    # right for its first 8 calls (compile, 4 trials, the same-storage call), then returns a cached buffer
    code = relu_candidate(RELU_OK, """
        self.calls = getattr(self, "calls", 0) + 1
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        if self.calls > 8:
            return self.cached
        self.cached = y
        return y
    """)
    verdict = judge_in_child([{"name": "cached", "task": get_task("builtin/relu"), "code": code,
                               "options": cuda_options()}], backend="cuda")["cached"]
    assert verdict["error_class"] == "correctness:timed-output", verdict["message"]
    assert verdict["stage"] == "profile"


@pytest.mark.gpu
def test_illegal_address_is_a_cuda_error() -> None:
    code = relu_candidate(RELU_OK).replace("tl.store(y_ptr + offsets,", "tl.store(y_ptr + offsets + 100000000000,")
    verdict = judge_in_child([{"name": "illegal", "task": get_task("builtin/relu"), "code": code,
                               "options": cuda_options()}], backend="cuda")["illegal"]
    assert verdict["error_class"] == "cuda:error", verdict["message"]
    assert not verdict["ok"]


@pytest.mark.gpu
def test_pytorch_compute_under_partial_policy_fails_low_triton_share_on_cuda() -> None:
    # one tiny Triton launch, the real work in PyTorch: the recorded data path is mostly PyTorch
    code = relu_candidate(RELU_OK, """
        y = torch.empty_like(x)
        relu_kernel[(1,)](x, y, 1024, BLOCK=1024)
        z = torch.relu(x)
        for _ in range(20):
            z = torch.relu(z)
        z[:1024] = y[:1024]
        return z
    """)
    verdict = judge_in_child([{"name": "partial", "task": get_task("builtin/relu"), "code": code,
                               "options": cuda_options(compute_policy="partial")}], backend="cuda")["partial"]
    assert verdict["error_class"] == "correctness:low-triton-share", verdict["message"]


def _task_with(name: str, source: str, **fields) -> Task:
    """A task of `source` (dedented) followed by the get_inputs/get_init_inputs of `_RELU_TASK_TAIL`."""
    source = textwrap.dedent(source) + textwrap.dedent(_RELU_TASK_TAIL)
    return Task(id=f"test/{name}", suite="test", name=name, level=1, source=source, **fields)


_RELU_TASK_TAIL = """
    def get_inputs():
        return [torch.randn(N, 64)]


    def get_init_inputs():
        return []
"""


def test_a_reference_that_fails_is_the_tasks_failure_not_the_candidates():
    # The small preset breaks a coupling the task's sizes rely on (N must equal a layer's 64, as
    # KernelBench's level-2 ConvTranspose3d + LayerNorm tasks need under a size preset); a module
    # that imports a missing package; a reference that cannot be built.
    coupled = _task_with("coupled", """
        import torch
        import torch.nn as nn

        N = 64


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("zero", torch.zeros(64, 1))

            def forward(self, x):
                return torch.relu(x + self.zero)  # broadcasts only while N == 64
    """, presets={"small": {"N": 32}, "full": {}})
    missing = _task_with("missing", "import torch\nimport torch.nn as nn\nimport not_a_package_anywhere\n"
                         "N = 64\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n")
    unbuildable = _task_with("unbuildable", """
        import torch
        import torch.nn as nn

        N = 64


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                raise ValueError("this reference needs a GPU")

            def forward(self, x):
                return torch.relu(x)
    """)
    candidate = relu_candidate(RELU_OK)
    jobs = [{"name": task.name, "task": task, "code": candidate, "options": interpreter_options()}
            for task in (coupled, missing, unbuildable)]
    jobs.append({"name": "coupled-full", "task": coupled, "code": candidate,
                 "options": interpreter_options(preset="full")})
    got = judge_in_child(jobs)
    for name in ("coupled", "missing", "unbuildable"):
        assert got[name]["error_class"] == "task:reference-error", (name, got[name]["message"])
        assert not got[name]["ok"]
    assert "size preset 'small'" in got["coupled"]["message"] and "(32, 64) float32" in got["coupled"]["message"]
    assert "not_a_package_anywhere" in got["missing"]["message"]
    assert "needs a GPU" in got["unbuildable"]["message"]
    assert got["coupled-full"]["ok"], got["coupled-full"]["message"]  # the same candidate at the written size


def test_code_written_for_a_gpu_runs_on_the_interpreter_as_on_a_gpu():
    """KernelBench answers say `device="cuda"`, `.cuda()`, `.to("cuda")`, `assert x.is_cuda`,
    `torch.cuda.synchronize()`, an SM count from `torch.cuda.get_device_properties`: the
    interpreter's CPU tensors stand in for CUDA tensors, so they are judged by their kernels; what
    is not mapped (other `torch.cuda` calls) fails with the hint."""
    from atrl.harness.stages.judge import CPU_DEVICE_HINT

    relu = get_task("builtin/relu")
    on_gpu = relu_candidate(RELU_OK, """
        y = torch.empty(x.shape, device="cuda", dtype=x.dtype)
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
    """)
    asserted = relu_candidate(RELU_OK, """
        assert x.is_cuda, "expects a GPU tensor"
        x = x.cuda().contiguous()
        y = torch.empty_like(x).to("cuda")
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
    """)
    wrong_on_gpu = relu_candidate(RELU_OK, """
        y = torch.zeros(x.shape, device=torch.device("cuda", 0), dtype=x.dtype)
        relu_kernel[(triton.cdiv(x.numel(), 1024) // 2,)](x, y, x.numel(), BLOCK=1024)
        return y
    """)
    synchronized = relu_candidate(RELU_OK, """
        programs = min(torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count,
                       triton.cdiv(x.numel(), 1024))
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        torch.cuda.synchronize()
        return y if programs > 0 else None
    """)
    unmapped = relu_candidate(RELU_OK, """
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        assert torch.cuda.mem_get_info()[0] > 0, "needs GPU memory"
        return y
    """)
    other = relu_candidate(RELU_OK, """
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=undefined_block)
        return y
    """)
    cases = (("on_gpu", on_gpu), ("asserted", asserted), ("wrong_on_gpu", wrong_on_gpu),
             ("synchronized", synchronized), ("unmapped", unmapped), ("other", other))
    got = judge_in_child([{"name": name, "task": relu, "code": code, "options": interpreter_options()}
                          for name, code in cases])
    for name in ("on_gpu", "asserted", "synchronized"):
        assert got[name]["ok"], got[name]
    assert got["wrong_on_gpu"]["error_class"] == "correctness:mismatch", got["wrong_on_gpu"]  # judged by its kernel
    assert got["unmapped"]["error_class"] == "compile:error", got["unmapped"]
    assert CPU_DEVICE_HINT in got["unmapped"]["message"], got["unmapped"]
    assert got["other"]["error_class"] == "compile:error" and CPU_DEVICE_HINT not in got["other"]["message"]
