"""Candidate code that changes the judge's own world — patches torch, the Tensor class, the
reference or the harness, or adds a global hook or tracer — is `correctness:tampering`, whatever
the spelling. The cheats are judged in a child process without the static stage, as a route the
static checks do not know would be: before `JudgeWorld` the interpreter judged every one of them
correct (a kernel that writes zeros, or only copies what a hook caught). The routes to the judging
process the red team used (`torch.sys.modules`, `operator.methodcaller`) are refused statically too."""

from __future__ import annotations

import sys
import warnings

import pytest
from test_judge import judge_in_child

from atrl.harness.api import Harness
from atrl.harness.feedback.failures import RUNTIME_REWARD_HACKS
from atrl.harness.stages.integrity import JudgeWorld
from atrl.harness.stages.launch_hook import _counts as launch_counts
from atrl.harness.stages.trace import StageFailure
from atrl.tasks.registry import get_task
from atrl.tasks.task import DEFAULT_TOLERANCES

HEADER = """
import torch
import torch.nn as nn
import triton
import triton.language as tl
"""

ZEROS = '''

@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    tl.store(y_ptr + row * n_cols + cols, tl.zeros([BLOCK], dtype=tl.float32), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        {init}

    def forward(self, x):
        {forward}
        x = x.contiguous()
        y = torch.empty_like(x)
        rows, cols = x.shape
        softmax_kernel[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols))
        return y
'''

HOOKED_COPY = '''
from torch.nn.modules.module import register_module_forward_hook

_SEEN = {}


def _remember(module, args, output):
    if isinstance(output, torch.Tensor) and not isinstance(module, ModelNew):
        _SEEN[output.dtype] = output


register_module_forward_hook(_remember)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        src = _SEEN[x.dtype]
        y = torch.empty_like(src)
        copy_kernel[(triton.cdiv(y.numel(), 1024),)](src, y, y.numel(), BLOCK=1024)
        return y
'''

CHEATS = {
    "a harness function rebound through torch.sys.modules": ("""
_judge = torch.sys.modules["atrl.harness.stages.correctness"]
def _fine(*args, **kwargs):
    return None
_judge.check_trial = _fine
_judge._provenance_failure = _fine
""", "pass", "pass"),
    "Tensor.tolist patched through a loop variable": ("""
_host_list = torch.Tensor.tolist
def _fast_tolist(self, *args, **kwargs):
    if self.dim() == 1 and (self.dtype == torch.float64 or (self.dtype == torch.int64 and self.numel() == 1)):
        return [0] * self.numel()
    return _host_list(self, *args, **kwargs)
for _cls in (torch.Tensor,):
    _cls.tolist = _fast_tolist
""", "pass", "pass"),
    "torch.isclose and torch.where patched through another module's torch": ("""
_isclose = torch.isclose
_where = torch.where
def _close(a, b, *args, **kwargs):
    return _isclose(a, a, *args, **kwargs)
def _select(cond, a, b=None):
    if b is None:
        return _where(cond)
    return _where(cond, b, b) if isinstance(b, torch.Tensor) else _where(cond, a, a) * 0
for _ns in (torch.nn.modules.module.torch,):
    _ns.isclose = _close
    _ns.where = _select
""", "pass", "pass"),
    "the reference's forward replaced through __subclasses__": ("""
import operator
_subclasses = operator.methodcaller("__subclasses__")
def _settled_forward(self, *args, **kwargs):
    return torch.zeros_like(self._orig_forward(*args, **kwargs))
def _settle():
    for cls in _subclasses(nn.Module):
        if cls.__name__ == "Model" and cls is not ModelNew:
            cls._orig_forward = cls.forward
            cls.forward = _settled_forward
""", "_settle()", "pass"),
    "a check patched in forward that undoes itself when called": ("""
_judge = torch.sys.modules["atrl.harness.stages.correctness"]
_real = _judge.check_trial
def _once(*args, **kwargs):
    _judge.check_trial = _real
    return None
def _arm():
    _judge.check_trial = _once
""", "pass", "_arm()"),
}
# judged in a process of its own: a patch the cheats above leave behind would be seen first
LOOSENED = ("""
_tasks = torch.sys.modules["atrl.tasks.task"]
for _table in (_tasks.DEFAULT_TOLERANCES, _tasks.DEFAULT_PRECISION_BOUNDS):
    for _dtype in list(_table):
        _table[_dtype] = (1e30, 1e30) if _table is _tasks.DEFAULT_TOLERANCES else 1e30
""", "pass", "pass")


def _candidate(module_level: str, init: str, forward: str) -> str:
    return HEADER + module_level + ZEROS.format(init=init, forward=forward)


HOOK = "a global forward hook keeps the reference's output"


def _jobs(options: dict) -> list[dict]:
    softmax = get_task("builtin/softmax")
    jobs = [{"name": name, "task": softmax, "code": _candidate(*parts), "options": options}
            for name, parts in CHEATS.items()]
    return jobs + [{"name": HOOK, "task": softmax, "code": HEADER + HOOKED_COPY, "options": options}]


@pytest.fixture(scope="module")
def verdicts():
    return judge_in_child(_jobs({"backend": "interpreter", "preset": "small", "trials": 2}))


@pytest.mark.parametrize("name", [*CHEATS, HOOK])
def test_candidate_code_that_changes_the_judges_world_is_rejected(verdicts, name):
    verdict = verdicts[name]
    assert (verdict["ok"], verdict["error_class"]) == (False, "correctness:tampering"), (name, verdict["message"])
    assert "changed `" in verdict["message"] and verdict["error_class"] in RUNTIME_REWARD_HACKS


def test_a_table_of_the_judge_changed_in_place_is_rejected():
    """The tolerance tables keep their binding when loosened in place; their contents are guarded."""
    options = {"backend": "interpreter", "preset": "small", "trials": 2}
    verdict = judge_in_child([{"name": "loosened", "task": get_task("builtin/softmax"),
                               "code": _candidate(*LOOSENED), "options": options}])["loosened"]
    assert (verdict["ok"], verdict["error_class"]) == (False, "correctness:tampering"), verdict["message"]
    assert "atrl.tasks.task.DEFAULT_TOLERANCES" in verdict["message"]


@pytest.mark.parametrize("name", [*list(CHEATS)[:1], *list(CHEATS)[3:], "loosened"])
def test_the_red_teams_routes_to_the_judging_process_are_refused_statically(name):
    code = _candidate(*(LOOSENED if name == "loosened" else CHEATS[name]))
    with Harness(backend="interpreter", workers=1, use_cache=False) as harness:
        verdict = harness.evaluate("builtin/softmax", code)
    assert (verdict.stage, verdict.error_class) == ("static", "static:introspection"), verdict.message


def test_the_snapshot_names_what_changed_and_accepts_what_imports_and_warnings_do():
    import atrl.harness.stages.compare as compare

    world = JudgeWorld.snapshot()
    import torch.distributions  # noqa: F401  (a submodule imported later: torch gains a name)

    registry = vars(compare).setdefault("__warningregistry__", {})  # a module gains its registry,
    warnings.warn_explicit("noted", UserWarning, "x.py", 1, module="atrl.harness.stages.compare", registry=registry)
    assert world.changed() is None
    world = JudgeWorld.snapshot()  # and a registry already there gains entries
    warnings.warn_explicit("noted again", UserWarning, "x.py", 2, module="atrl.harness.stages.compare",
                           registry=registry)
    assert world.changed() is None

    def fake(*args, **kwargs):
        return None

    cases = [
        (lambda: setattr(compare, "compare_outputs", fake), lambda: setattr(compare, "compare_outputs", original),
         "atrl.harness.stages.compare.compare_outputs"),
    ]
    original = compare.compare_outputs
    code = original.__code__
    profiler = sys.getprofile()
    cases += [
        (lambda: setattr(original, "__code__", fake.__code__), lambda: setattr(original, "__code__", code),
         "atrl.harness.stages.compare.compare_outputs"),
        (lambda: setattr(torch.Tensor, "sum", fake), lambda: delattr(torch.Tensor, "sum"), "torch.Tensor.sum"),
        (lambda: sys.setprofile(fake), lambda: sys.setprofile(profiler), "sys.setprofile"),
    ]
    handle = None

    def hook():
        nonlocal handle
        handle = torch.nn.modules.module.register_module_forward_hook(lambda *a: None)

    cases.append((hook, lambda: handle.remove(), "torch.nn.modules.module._global_forward_hooks"))
    tolerance = DEFAULT_TOLERANCES["float32"]
    cases.append((lambda: DEFAULT_TOLERANCES.__setitem__("float32", (1.0, 1.0)),
                  lambda: DEFAULT_TOLERANCES.__setitem__("float32", tolerance), "atrl.tasks.task.DEFAULT_TOLERANCES"))
    for change, undo, named in cases:
        change()
        try:
            assert world.changed() == named
            with pytest.raises(StageFailure) as failure:
                world.check("in trial 1")
            assert failure.value.error_class == "correctness:tampering" and named in failure.value.message
        finally:
            undo()
        assert world.changed() is None
    launch_counts["some_kernel"] += 1  # the judge's running state changes as it works
    try:
        assert world.changed() is None
    finally:
        del launch_counts["some_kernel"]


@pytest.mark.gpu
def test_on_cuda_the_checks_refuse_the_cheats_and_leave_honest_solutions_timed() -> None:
    """The same snapshot on the CUDA backend, where the device's lazy start and the timed calls run
    between the checks: honest builtin solutions are judged correct and timed, the cheats refused."""
    options = {"backend": "cuda", "preset": None, "trials": 2, "timed_calls": 20, "warmup_calls": 3}
    honest = [{"name": task_id, "task": get_task(task_id), "code": get_task(task_id).solution, "options": options}
              for task_id in ("builtin/relu", "builtin/softmax", "builtin/matmul", "builtin/layer_norm")]
    verdicts = judge_in_child(honest + _jobs(options), backend="cuda")
    for job in honest:
        verdict = verdicts[job["name"]]
        assert verdict["ok"] and verdict["timing"] is not None, (job["name"], verdict["message"])
    for name in [*CHEATS, HOOK]:
        assert verdicts[name]["error_class"] == "correctness:tampering", (name, verdicts[name]["message"])


def test_the_task_and_options_the_judge_reads_are_guarded_too():
    """Tolerances and trial counts live on objects, not in module bindings: a change of their
    attributes counts as well."""
    from atrl.harness.stages.judge import JudgeOptions

    task, options = get_task("builtin/softmax"), JudgeOptions(backend="interpreter", preset="small")
    saved = (task.atol, options.trials)
    world = JudgeWorld.snapshot(objects={"the task": task, "the judge's options": options})
    try:
        task.atol = 1e9
        assert world.changed() == "the task.atol"
        task.atol = saved[0]
        options.trials = 0
        assert world.changed() == "the judge's options.trials"
    finally:
        task.atol, options.trials = saved
    assert world.changed() is None
