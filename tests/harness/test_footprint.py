"""Task footprints measured on the meta device match hand counts, without allocating anything."""

from __future__ import annotations

import types

import torch

from atrl.harness.sandbox.footprint import (
    COMPARE_BYTES_PER_ELEMENT,
    COMPARE_CHUNK_ELEMENTS,
    L2_FLUSH_BYTES,
    defines_inputs,
)
from atrl.harness.sandbox.meta_estimate import estimate_module, estimate_task
from atrl.tasks.registry import get_task

GIB = 1 << 30


def _module(source: str) -> types.ModuleType:
    module = types.ModuleType("task_under_test")
    exec("import torch\nimport torch.nn as nn\n" + source, module.__dict__)
    return module


KB_RELU = """
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.rand(4096, 393216)]
def get_init_inputs():
    return []
"""


def test_kernelbench_sized_relu_is_measured_without_allocating_and_matches_the_hand_count():
    f = estimate_module(_module(KB_RELU), False, torch.float32, timed=True)
    i = 4096 * 393216 * 4  # 6 GiB
    assert (f.method, f.inputs, f.inputs64, f.outputs, f.outputs64) == ("meta", i, 2 * i, i, 2 * i)
    assert f.forward_temporaries == 0 and f.largest_input_elements == 4096 * 393216
    # at the candidate's call: inputs + reference copy + output, float64 inputs + output,
    # candidate copy + previous + new output, then the mutation check's three boolean masks
    held, whole64, candidate, masks = 3 * i, 4 * i, 3 * i, 3 * 4096 * 393216
    assert f.peak == held + whole64 + candidate + masks == int(64.5 * GIB)
    # sliced float64: an eighth of the float64 part at a time; the timed stage then dominates
    profile = 2 * i + 3 * i + 4 * i + COMPARE_BYTES_PER_ELEMENT * COMPARE_CHUNK_ELEMENTS + L2_FLUSH_BYTES
    assert f.peak_sliced == profile < f.peak


def test_hinge_loss_temporaries_are_the_forwards_live_intermediates():
    hinge = _module("""
class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))
def get_inputs():
    return [torch.rand(32768, 32768), torch.randint(0, 2, (32768, 1)).float() * 2 - 1]
def get_init_inputs():
    return []
""")
    f = estimate_module(hinge, False, torch.float32, timed=False)
    big = 32768 * 32768 * 4
    assert f.inputs == big + 32768 * 4 and f.outputs == 4
    # predictions * targets and 1 - (...) are alive together; clamp's result replaces the first
    assert f.forward_temporaries == 2 * big - f.outputs  # what it allocates beyond its output
    assert f.forward64_temporaries == 4 * big - f.outputs64


def test_parameters_count_at_the_task_dtype_and_in_float64():
    linear = _module("""
class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
    def forward(self, x):
        return self.fc(x)
def get_inputs():
    return [torch.rand(8, 1024)]
def get_init_inputs():
    return [1024]
""")
    f = estimate_module(linear, False, torch.float16, timed=False)
    assert f.parameters == (1024 * 1024 + 1024) * 2 and f.parameters64 == (1024 * 1024 + 1024) * 8
    assert f.inputs == 8 * 1024 * 2 and f.outputs == 8 * 1024 * 2


def test_builtin_tasks_at_their_presets():
    relu = estimate_task(get_task("builtin/relu"), "small", timed=False)
    assert (relu.method, relu.inputs, relu.outputs, relu.inputs64) == ("meta", 4096 * 4, 4096 * 4, 4096 * 8)
    i = 4096 * 4
    # held (3 i) + float64 (4 i) + candidate side (3 i) + the comparison of 4096 elements at once
    assert relu.output_elements == 4096 and relu.peak == 10 * i + COMPARE_BYTES_PER_ELEMENT * 4096
    full = estimate_task(get_task("builtin/relu"), "full", timed=True)
    assert full.inputs == (1 << 26) * 4 and full.outputs64 == (1 << 26) * 8
    bmm = get_task("builtin/bmm")
    f = estimate_task(bmm, None, timed=True)
    assert f.method == "meta" and f.outputs > 0 and f.peak > f.inputs + f.outputs


def test_a_forward_meta_cannot_run_gets_the_conservative_rule_and_unbuildable_inputs_are_unknown():
    item = _module("""
class Model(nn.Module):
    def forward(self, x):
        return x * float(x.sum().item())
def get_inputs():
    return [torch.rand(1000)]
def get_init_inputs():
    return []
""")
    f = estimate_module(item, False, torch.float32, timed=False)
    assert f.method == "meta-inputs" and f.approximate and f.outputs == f.inputs == 4000
    assert f.forward_temporaries == 4000 and "meta" in f.reason
    broken = _module("""
class Model(nn.Module):
    def forward(self, x):
        return x
def get_inputs():
    x = torch.rand(10)
    return [x * x.max().item()]
def get_init_inputs():
    return []
""")
    assert estimate_module(broken, False, torch.float32, timed=False).method == "unknown"


def test_a_task_without_inputs_is_recognised_from_its_source():
    assert not defines_inputs("", multi_case=False)
    assert defines_inputs(KB_RELU, multi_case=False) and not defines_inputs(KB_RELU, multi_case=True)
