"""PyTorch handed to Triton's launcher as a callback: a heuristic's value or a config's `pre_hook`
that is a `functools.partial` of a torch op runs that op inside the launch with no frame of the
candidate's on the stack, so it once counted as the launcher's own work and the kernel that only
copied its result was judged correct (strict and partial policy alike). The launcher only moves
data: a computing op inside a launch is recorded as PyTorch's, and what runs inside a launch feeds
the launch. The cheats are judged without the static stage (which refuses a torch function named as
a value anywhere in the file under the strict policy), so the run-time rule is what is tested."""

from __future__ import annotations

import pytest
from test_judge import judge_in_child

from atrl.harness.static.checks import check_static
from atrl.tasks.registry import get_task

HEADER = '''
import functools
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

_BUF = torch.empty(0)


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
'''

# a copy into _BUF, then a kernel whose heuristic fills in the argument it reads
HEURISTIC_FORWARD = '''

class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        _BUF.data = torch.empty_like(x)  # the same object the callback holds, on the input's device
        y = torch.empty_like(x)
        copy_kernel[(triton.cdiv(n, 1024),)](x, _BUF, n, BLOCK=1024)
        finish_kernel[(triton.cdiv(n, 1024),)](y, n, BLOCK=1024)
        return y
'''

IN_PLACE_HEURISTIC = HEADER + '''

@triton.heuristics({"act_ptr": functools.partial(F.relu, _BUF)})  # called as F.relu(_BUF, args): inplace=args
@triton.jit
def finish_kernel(y_ptr, n, act_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(act_ptr + offs, mask=mask), mask=mask)
''' + HEURISTIC_FORWARD

NEW_TENSOR_HEURISTIC = HEADER + '''

@triton.heuristics({"src_ptr": functools.partial(F.softmax, _BUF, -1)})  # a new tensor, passed to the kernel
@triton.jit
def finish_kernel(y_ptr, n, src_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)
''' + HEURISTIC_FORWARD

CONFIG_PRE_HOOK = HEADER + '''

@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, pre_hook=functools.partial(F.relu, _BUF))], key=["n"])
@triton.jit
def finish_kernel(src_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        _BUF.data = torch.empty_like(x)  # the same object the callback holds, on the input's device
        y = torch.empty_like(x)
        copy_kernel[(triton.cdiv(n, 1024),)](x, _BUF, n, BLOCK=1024)
        finish_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](_BUF, y, n)
        return y
'''

# the callbacks Triton offers, used honestly: a pre-hook that zeroes, resets and restores, a heuristic
HONEST_AUTOTUNED = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _zero(nargs):
    nargs["y_ptr"].zero_()


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, pre_hook=_zero), triton.Config({"BLOCK": 1024})],
                 key=["n"], reset_to_zero=["y_ptr"], restore_value=["x_ptr"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        return y
'''

CHEATS = {
    "a heuristic's partial(F.relu) in place": ("builtin/relu", IN_PLACE_HEURISTIC),
    "a heuristic's partial(F.softmax) returning a new tensor": ("builtin/softmax", NEW_TENSOR_HEURISTIC),
    "a config pre_hook's partial(F.relu)": ("builtin/relu", CONFIG_PRE_HOOK),
}


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict]:
    options = {"backend": "interpreter", "preset": "small", "trials": 2}
    jobs = [{"name": name, "task": get_task(task), "code": code, "options": options}
            for name, (task, code) in CHEATS.items()]
    jobs.append({"name": "honest", "task": get_task("builtin/relu"), "code": HONEST_AUTOTUNED, "options": options})
    return judge_in_child(jobs)


@pytest.mark.parametrize("name", list(CHEATS))
def test_pytorch_run_by_a_launch_callback_is_pytorch_compute(verdicts, name):
    verdict = verdicts[name]
    assert (verdict["ok"], verdict["error_class"]) == (False, "correctness:pytorch-compute"), verdict["message"]


def test_triton_callbacks_used_honestly_stay_accepted(verdicts):
    verdict = verdicts["honest"]
    assert verdict["ok"], verdict["message"]


@pytest.mark.parametrize("name", list(CHEATS))
def test_a_torch_function_named_where_the_module_is_imported_is_refused_statically_under_strict(name):
    violations = check_static(CHEATS[name][1], "strict")
    assert any(v.rule == "static:pytorch-compute" and "passed as a function" in v.message for v in violations), \
        [(v.rule, v.message) for v in violations]


def test_a_table_of_torch_functions_called_by_subscript_is_refused_statically():
    code = HEADER + '''
_OPS = (F.mse_loss, torch.linspace)


class ModelNew(nn.Module):
    def forward(self, p, t):
        line = _OPS[1](_OPS[0](p, t), 0.0, 1)
        out = torch.empty((), dtype=p.dtype)
        copy_kernel[(1,)](line, out, 1, BLOCK=16)
        return out
'''
    rules = {(v.rule, v.line) for v in check_static(code, "strict")}
    assert ("static:pytorch-compute", code.splitlines().index("_OPS = (F.mse_loss, torch.linspace)") + 1) in rules


def test_honest_module_level_code_is_not_refused():
    assert check_static(HONEST_AUTOTUNED, "strict") == []
    decorated = HONEST_AUTOTUNED.replace("    def forward(self, x):", "    @torch.no_grad()\n    def forward(self, x):")
    assert check_static(decorated, "strict") == []
    annotated = HONEST_AUTOTUNED.replace("\n\ndef _zero", "\nDTYPE: torch.dtype = torch.float32\n\n\ndef _zero")
    assert "DTYPE: torch.dtype" in annotated and check_static(annotated, "strict") == []


@pytest.mark.gpu
def test_on_cuda_launch_callbacks_are_recorded_and_honest_autotuning_is_timed():
    """On a GPU no launcher copies the arguments to the host: the callbacks' PyTorch is seen by the
    compute rule and by what ran inside the launch; the honest autotuned kernel is correct and timed."""
    options = {"backend": "cuda", "preset": None, "trials": 2, "timed_calls": 20, "warmup_calls": 3}
    jobs = [{"name": name, "task": get_task(task), "code": code, "options": options}
            for name, (task, code) in CHEATS.items()]
    jobs.append({"name": "honest", "task": get_task("builtin/relu"), "code": HONEST_AUTOTUNED, "options": options})
    verdicts = judge_in_child(jobs, backend="cuda")
    for name in CHEATS:
        assert verdicts[name]["error_class"] == "correctness:pytorch-compute", (name, verdicts[name]["message"])
    assert verdicts["honest"]["ok"] and verdicts["honest"]["timing"] is not None, verdicts["honest"]["message"]
