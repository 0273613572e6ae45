"""Routes that run PyTorch or NumPy where the harness's recorder cannot see them are refused before
anything runs: a hook the launcher calls with the kernel's arguments, NumPy views of tensor memory,
element-wise Python callbacks on tensors, and the recorder's own dispatch stack. Each snippet is
the core of a cheat that the interpreter judged correct before these rules existed."""

from __future__ import annotations

import pytest

from atrl.harness.static.checks import check_static

KERNEL = '''
import functools
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def touch(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))
'''

FORWARD = '''

class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        {body}
        touch[(1,)](x, y, BLOCK=16)
        return y
'''

CHEATS = {
    "a pre-run hook doing the work": ("touch.add_pre_run_hook(torch.relu_)", "pass", "static:monkeypatch"),
    "a hook appended to the launcher's list": (
        "touch.pre_run_hooks.append(functools.partial(torch.nn.functional.leaky_relu_, negative_slope=0.1))",
        "pass", "static:monkeypatch"),
    "the hook reached by getattr": ('getattr(touch, "add_pre_run_hook")(torch.relu_)', "pass", "static:monkeypatch"),
    "NumPy on a view of the output": ("", "np.tanh(np.from_dlpack(x), out=np.from_dlpack(y))",
                                      "static:pytorch-compute"),
    "a Python callback per element": ("", "y.copy_(x).apply_(lambda v: max(v, 0.0))", "static:pytorch-compute"),
    "a Python callback over two tensors": ("", "y.copy_(x).map_(x, lambda a, b: a * b)", "static:pytorch-compute"),
    "the recorder taken off the dispatch stack": (
        "", "torch._C._get_dispatch_stack_at(torch._C._len_torch_dispatch_stack() - 1)", "static:monkeypatch"),
    "torch.Tensor patched through type()": ("_T = type(torch.empty(0))\n_T.sum = lambda self, *a, **k: 0", "pass",
                                             "static:monkeypatch"),
    "a tensor method called through type()": ("", "y = type(x).relu(x)", "static:monkeypatch"),
}


@pytest.mark.parametrize("name", list(CHEATS))
@pytest.mark.parametrize("policy", ["strict", "partial"])
def test_a_hidden_compute_route_is_refused_before_anything_runs(name: str, policy: str) -> None:
    module_level, body, rule = CHEATS[name]
    code = KERNEL + module_level + "\n" + FORWARD.format(body=body)
    violations = check_static(code, policy)
    assert rule in {v.rule for v in violations}, (name, [(v.rule, v.message) for v in violations])


def test_the_same_kernel_without_a_hidden_route_passes() -> None:
    assert check_static(KERNEL + FORWARD.format(body="pass"), "strict") == []
