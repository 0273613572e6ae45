"""Stage 2: static rules. Each rule fires on a minimal otherwise-legitimate candidate, at the right line,
and unusual but legitimate kernels pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from atrl.harness.feedback.failures import FAILURE_CLASSES
from atrl.harness.static.ascend import RULES as ASCEND_RULES
from atrl.harness.static.checks import check_static

HEADER = """\
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)

"""
HEADER_LINES = HEADER.count("\n")  # the first line after HEADER is HEADER_LINES + 1

FORWARD = """
class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, 1024),)
        relu_kernel[grid](x, y, n, BLOCK=1024)
        return y
"""

BASE = HEADER + FORWARD


def rules(code: str, **kwargs) -> list[tuple[str, int]]:
    return [(v.rule, v.line) for v in check_static(code, **kwargs)]


def line_of(code: str, marker: str) -> int:
    """1-based line of the first line containing `marker`."""
    for number, text in enumerate(code.splitlines(), start=1):
        if marker in text:
            return number
    raise AssertionError(f"{marker!r} not in code")


def with_forward_line(statement: str) -> str:
    """BASE with `statement` inserted as the first line of forward."""
    return BASE.replace("        x = x.contiguous()\n", f"        {statement}\n        x = x.contiguous()\n")


def with_prelude(text: str) -> str:
    """BASE with module-level `text` after the imports."""
    return HEADER.replace("import triton.language as tl\n", f"import triton.language as tl\n{text}\n") + FORWARD


def assert_fires(code: str, rule: str, marker: str, **kwargs) -> None:
    found = rules(code, **kwargs)
    assert (rule, line_of(code, marker)) in found, found


def test_base_candidate_passes():
    assert check_static(BASE) == []


def test_every_violation_names_its_rule_and_line_and_is_a_failure_class():
    violations = check_static(with_forward_line("eval('1')"))
    assert violations
    for v in violations:
        assert v.rule in FAILURE_CLASSES
        assert v.rule in v.message and f"line {v.line}" in v.message


def test_violations_are_sorted_by_line():
    code = with_prelude("import subprocess").replace("return y", "return y * 2")
    lines = [v.line for v in check_static(code)]
    assert lines == sorted(lines) and len(lines) >= 2


# --- structure ---------------------------------------------------------------------------------------
def test_syntax_error_is_reported_with_its_line():
    code = BASE.replace("def forward(self, x):", "def forward(self, x)")
    assert rules(code) == [("static:syntax", line_of(code, "def forward(self, x)"))]


def test_missing_modelnew_is_reported():
    assert ("static:no-modelnew", 1) in rules(BASE.replace("class ModelNew", "class Other"))


def test_missing_triton_kernel_is_reported():
    code = BASE.replace("@triton.jit\n", "")
    assert ("static:no-triton-kernel", 1) in rules(code)


def test_kernel_never_launched_is_no_launch():
    code = BASE.replace("relu_kernel[grid](x, y, n, BLOCK=1024)", "pass")
    assert_fires(code, "static:no-launch", "def forward")


def test_kernel_launched_only_from_dead_code_is_no_launch():
    code = BASE.replace("relu_kernel[grid](x, y, n, BLOCK=1024)", "pass") + """
def never_called(x, y, n):
    relu_kernel[(1,)](x, y, n, BLOCK=1024)
"""
    assert_fires(code, "static:no-launch", "def forward")


def test_kernel_launched_only_from_unused_method_is_no_launch():
    code = BASE.replace("relu_kernel[grid](x, y, n, BLOCK=1024)", "pass") + """
    def decoy(self, x, y, n):
        relu_kernel[(1,)](x, y, n, BLOCK=1024)
"""
    assert_fires(code, "static:no-launch", "def forward")


def test_modelnew_without_forward_is_no_launch():
    code = HEADER + "\nclass ModelNew(nn.Module):\n    pass\n"
    assert_fires(code, "static:no-launch", "class ModelNew")


def test_a_local_variable_hides_a_module_function_of_the_same_name():
    code = BASE.replace("relu_kernel[grid](x, y, n, BLOCK=1024)", "block = 1024\n        relu_kernel[grid](x, y, n, BLOCK=block)") \
        + "\n\ndef block(t):\n    return torch.relu(t)\n"
    assert check_static(code) == []
    assert_fires(code.replace("block = 1024\n        ", ""), "static:pytorch-compute", "return torch.relu(t)")


def test_calling_a_base_constructor_by_name_does_not_make_the_base_a_submodule():
    code = BASE.replace("class ModelNew(nn.Module):", """class Base(nn.Module):
    def forward(self, x):
        return torch.relu(x)


class ModelNew(Base):
    def __init__(self):
        Base.__init__(self)
""")
    assert check_static(code) == []
    assert_fires(code.replace("Base.__init__(self)", "self.inner = Base()"), "static:pytorch-compute", "torch.relu(x)")


# --- pytorch compute (strict) ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "statement",
    [
        "z = torch.relu(x)",
        "z = torch.nn.functional.relu(x)",
        "z = torch.matmul(x, x)",
        "z = torch.softmax(x, dim=-1)",
        "z = x.sum()",
        "z = x.exp()",
        "z = x.matmul(x)",
        "z = x.clamp(min=0)",
        "z = x.max()",
        "x.add_(1)",
        "z = x.float()",
        "z = x.to(torch.float16)",
        "z = x.to(dtype=torch.float16)",
        "z = x @ x",
        "z = x * 2",
        "z = -x",
        "z = x > 0",
        "x += 1",
        "x[0] = 0",
        "z = x[x > 0]",
        "z = sum([x, x])",
        "z = torch.where(x > 0, x, 0)",
    ],
)
def test_pytorch_compute_in_forward_is_rejected_under_strict(statement):
    code = with_forward_line(statement)
    assert_fires(code, "static:pytorch-compute", statement)


@pytest.mark.parametrize("statement", [
    "z = torch.empty_like(x, memory_format=torch.contiguous_format)",
    "z = x.contiguous(memory_format=torch.contiguous_format)",
    "z = torch.empty(x.shape, device=x.device, dtype=x.dtype, layout=torch.strided)",
    "z = torch.empty_like(x, memory_format=torch.preserve_format)",
    "scale = torch.pi / x.shape[-1]",
])
def test_torch_constants_passed_as_values_are_not_compute(statement):
    # memory formats, layouts and numbers under torch are values, not functions passed around
    assert rules(with_forward_line(statement)) == []


@pytest.mark.parametrize("statement", ["z = torch.relu(x)", "z = x * 2", "z = x @ x"])
def test_pytorch_compute_is_allowed_under_partial(statement):
    assert rules(with_forward_line(statement), compute_policy="partial") == []


def test_partial_policy_still_requires_a_launch():
    code = BASE.replace("relu_kernel[grid](x, y, n, BLOCK=1024)", "y = torch.relu(x)")
    found = rules(code, compute_policy="partial")
    assert ("static:no-launch", line_of(code, "def forward")) in found


def test_unknown_policy_is_an_error():
    with pytest.raises(ValueError):
        check_static(BASE, compute_policy="lenient")


def test_functional_alias_is_caught():
    code = with_prelude("import torch.nn.functional as F").replace("x = x.contiguous()", "x = F.gelu(x)")
    assert_fires(code, "static:pytorch-compute", "F.gelu")


def test_from_import_alias_is_caught():
    code = with_prelude("from torch import relu as r").replace("x = x.contiguous()", "x = r(x)")
    assert_fires(code, "static:pytorch-compute", "x = r(x)")


def test_rebinding_a_torch_function_is_caught():
    code = with_forward_line("act = torch.sigmoid").replace("x = x.contiguous()", "x = act(x)")
    assert_fires(code, "static:pytorch-compute", "x = act(x)")


def test_compute_in_a_helper_called_by_forward_is_caught():
    code = BASE.replace("x = x.contiguous()", "x = prepare(x)") + "\n\ndef prepare(t):\n    return t.exp()\n"
    assert_fires(code, "static:pytorch-compute", "return t.exp()")


def test_compute_in_a_lambda_is_caught():
    code = with_forward_line("f = lambda t: t.tanh()").replace("x = x.contiguous()", "x = f(x)")
    assert_fires(code, "static:pytorch-compute", "t.tanh()")


def test_compute_in_a_method_called_via_self_is_caught():
    code = BASE.replace("x = x.contiguous()", "x = self.pre(x)") + "\n    def pre(self, t):\n        return t.sqrt()\n"
    assert_fires(code, "static:pytorch-compute", "t.sqrt()")


def test_calling_an_nn_layer_is_caught():
    code = BASE.replace(
        "class ModelNew(nn.Module):\n",
        "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.linear = nn.Linear(4, 4)\n\n",
    ).replace("x = x.contiguous()", "x = self.linear(x)")
    assert_fires(code, "static:pytorch-compute", "self.linear(x)")


def test_layer_allowed_per_task_passes():
    code = BASE.replace(
        "class ModelNew(nn.Module):\n",
        "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 3, 3)\n\n",
    ).replace("x = x.contiguous()", "x = self.conv(x).contiguous()")
    assert rules(code) != []
    assert rules(code, allow_torch=["torch.nn.Conv2d"]) == []


def test_allow_torch_extends_the_allowlist():
    code = with_forward_line("z = torch.cat([x, x])").replace("z = torch.cat([x, x])", "z = torch.cat([x, x]).flip(0)")
    assert [r for r, _ in rules(code)] == ["static:pytorch-compute", "static:pytorch-compute"]
    assert rules(code, allow_torch=["torch.cat", "Tensor.flip"]) == []


def test_a_copy_for_an_in_place_kernel_is_not_compute():
    # clone keeps values and layout: a buffer an in-place kernel then rewrites (a common answer);
    # on a data-movement task the run-time check counts the copy as the work (test_provenance.py)
    assert rules(with_forward_line("z = x.clone()")) == []
    assert rules(with_forward_line("z = torch.clone(x)")) == []



def _init(body: str) -> str:
    return "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n        " + body + "\n\n"


DODGES = {
    "numpy_on_tensor": (with_prelude("import numpy as np").replace("x = x.contiguous()", "x = np.exp(x)"), "np.exp"),
    "getattr_literal_method": (with_forward_line("z = getattr(x, 'sum')()"), "getattr(x"),
    "unbound_tensor_method": (with_forward_line("z = torch.Tensor.sum(x)"), "torch.Tensor.sum"),
    "torch_function_passed_to_map": (with_forward_line("z = list(map(torch.relu, [x]))"), "map(torch.relu"),
    "torch_function_stored_on_self": (
        BASE.replace("class ModelNew(nn.Module):\n", _init("self.act = torch.relu")).replace(
            "x = x.contiguous()", "x = self.act(x)"), "x = self.act(x)"),
    "modulelist_of_linear_layers": (
        BASE.replace("class ModelNew(nn.Module):\n", _init("self.ls = nn.ModuleList([nn.Linear(2, 2)])")).replace(
            "x = x.contiguous()", "for layer in self.ls:\n            x = layer(x)"), "x = layer(x)"),
    "parameter_arithmetic": (
        BASE.replace("class ModelNew(nn.Module):\n", _init("self.w = nn.Parameter(torch.ones(3))")).replace(
            "x = x.contiguous()", "x = x.contiguous() + self.w"), "+ self.w"),
    "method_of_a_helper_class": (
        BASE.replace("x = x.contiguous()", "x = Helper().go(x)") + "\nclass Helper:\n    def go(self, t):\n"
        "        return t.relu()\n", "return t.relu()"),
    "super_forward_of_an_nn_layer": (
        HEADER + "\nclass ModelNew(nn.Linear):\n    def forward(self, x):\n        y = super().forward(x)\n"
        "        relu_kernel[(1,)](y, y, 1, BLOCK=16)\n        return y\n", "super().forward"),
    "host_scalar_arithmetic_on_item": (with_forward_line("s = x.item() * 2"), "x.item()"),
    "torch_ops_namespace": (with_forward_line("z = torch.ops.aten.relu(x)"), "torch.ops"),
}


@pytest.mark.parametrize("name", sorted(DODGES))
def test_compute_dodge_is_caught(name):
    code, marker = DODGES[name]
    assert_fires(code, "static:pytorch-compute", marker)


def test_launch_only_in_a_nested_function_never_called_is_no_launch():
    code = BASE.replace("relu_kernel[grid](x, y, n, BLOCK=1024)",
                        "def never():\n            relu_kernel[grid](x, y, n, BLOCK=1024)")
    assert_fires(code, "static:no-launch", "def forward")


def test_kernel_held_on_self_counts_as_a_launch():
    code = BASE.replace("class ModelNew(nn.Module):\n", _init("self.k = relu_kernel")).replace(
        "relu_kernel[grid]", "self.k[grid]")
    assert check_static(code) == []


def test_module_passed_as_a_value_is_rejected():
    code = with_prelude("import os\ndef run(m):\n    m.system('ls')\nrun(os)")
    assert_fires(code, "static:dynamic-code", "run(os)")


def test_context_manager_that_can_swallow_errors_is_rejected():
    code = with_prelude("class Quiet:\n    def __exit__(self, *exc):\n        return True")
    assert_fires(code, "static:try-except", "def __exit__")


# --- anti-cheat rules under every policy --------------------------------------------------------------
CASES = [
    ("static:try-except", "try:\n    import math\nexcept ImportError:\n    pass", "try:"),
    ("static:try-except", "import contextlib\nSUPPRESS = contextlib.suppress(Exception)", "contextlib.suppress"),
    ("static:concurrency", "import threading", "import threading"),
    ("static:concurrency", "from concurrent.futures import ThreadPoolExecutor", "concurrent"),
    ("static:concurrency", "import multiprocessing as mp", "multiprocessing"),
    ("static:process-or-network", "import subprocess as sp", "import subprocess"),
    ("static:process-or-network", "from os import system", "from os import system"),
    ("static:process-or-network", "import os\nos.popen('ls')", "os.popen"),
    ("static:process-or-network", "import socket", "import socket"),
    ("static:process-or-network", "import ctypes", "import ctypes"),
    ("static:file-access", "LOG = open('log.txt', 'w')", "open("),
    ("static:file-access", "import pickle", "import pickle"),
    ("static:file-access", "import shutil", "import shutil"),
    ("static:file-access", "W = torch.load('w.pt')", "torch.load"),
    ("static:file-access", "import numpy as np\nW = np.load('w.npy')", "np.load"),
    ("static:dynamic-code", "X = eval('1 + 1')", "eval("),
    ("static:dynamic-code", "exec('pass')", "exec("),
    ("static:dynamic-code", "import importlib", "import importlib"),
    ("static:dynamic-code", "M = __import__('os')", "__import__"),
    ("static:dynamic-code", "G = globals()", "globals()"),
    ("static:dynamic-code", "F = getattr(torch, 'relu')", "getattr("),
    ("static:dynamic-code", "S = ().__class__.__base__.__subclasses__()", "__subclasses__"),
    ("static:dynamic-code", "T = torch", "T = torch"),
    ("static:introspection", "import inspect", "import inspect"),
    ("static:introspection", "import gc", "import gc"),
    ("static:introspection", "import sys\nF = sys._getframe(1)", "sys._getframe"),
    ("static:introspection", "import sys\nM = sys.modules", "sys.modules"),
    ("static:monkeypatch", "torch.allclose = lambda *a, **k: True", "torch.allclose ="),
    ("static:monkeypatch", "import time\ntime.perf_counter = lambda: 0.0", "time.perf_counter ="),
    ("static:monkeypatch", "setattr(torch, 'allclose', print)", "setattr("),
    ("static:monkeypatch", "torch.manual_seed(0)", "manual_seed"),
    ("static:monkeypatch", "torch.backends.cuda.matmul.allow_tf32 = True", "allow_tf32"),
    ("static:monkeypatch", "import atrl.harness", "import atrl"),
    ("static:monkeypatch", "class Sneaky(torch.Tensor):\n    pass", "class Sneaky"),
    ("static:cuda-stream-or-graph", "S = torch.cuda.Stream()", "torch.cuda.Stream"),
    ("static:cuda-stream-or-graph", "G = torch.cuda.CUDAGraph()", "CUDAGraph"),
    ("static:cuda-stream-or-graph", "C = torch.compile(print)", "torch.compile"),
    ("static:reference-access", "class Model(nn.Module):\n    pass\nREF = Model()", "REF = Model()"),
    ("static:reference-access", "from reference_module import Model", "reference_module"),
    ("static:reference-access", "X = get_inputs", "get_inputs"),
    ("static:environment", "import os\nE = os.environ.get('X')", "os.environ"),
    ("static:environment", "from os import getenv", "getenv"),
    ("static:host-code-in-kernel", "def _host(t):\n    return t\n\n\n@triton.jit\ndef host_kernel(x_ptr, BLOCK: "
     "tl.constexpr):\n    x = tl.load(x_ptr + tl.arange(0, BLOCK))\n    tl.store(x_ptr + tl.arange(0, BLOCK), _host(x))",
     "_host(x)"),
    ("static:host-code-in-kernel", "@triton.jit\ndef peek_kernel(x_ptr, BLOCK: tl.constexpr):\n    x = tl.load(x_ptr + "
     "tl.arange(0, BLOCK))\n    data = x.handle\n    tl.store(x_ptr + tl.arange(0, BLOCK), x)", "x.handle"),
]


@pytest.mark.parametrize(("rule", "prelude", "marker"), CASES, ids=[f"{r}:{m}" for r, _, m in CASES])
@pytest.mark.parametrize("policy", ["strict", "partial"])
def test_anti_cheat_rule_fires_under_every_policy(rule, prelude, marker, policy):
    assert_fires(with_prelude(prelude), rule, marker, compute_policy=policy)


def test_every_static_failure_class_has_a_firing_test():
    covered = {rule for rule, _, _ in CASES} | {
        "static:syntax", "static:no-modelnew", "static:no-triton-kernel", "static:no-launch",
        "static:pytorch-compute",
        *ASCEND_RULES,  # fired in test_static_ascend.py
    }  # fmt: skip
    assert {k for k in FAILURE_CLASSES if k.startswith("static:")} <= covered


def test_rules_fire_inside_forward_too():
    assert_fires(with_forward_line("import os; os.system('nvidia-smi')"), "static:process-or-network", "os.system")


def test_main_guard_body_is_ignored_but_its_else_is_not():
    tail = "\nif __name__ == '__main__':\n    print(Model)\nelse:\n    import subprocess\n"
    code = BASE + tail
    assert rules(code) == [("static:process-or-network", line_of(code, "import subprocess"))]


def test_os_path_is_allowed():
    assert rules(with_prelude("import os\nHERE = os.path.dirname('a/b')")) == []


def test_einops_imports_of_an_echoed_reference_are_allowed():
    # KernelBench's level-3 Mamba2 references import einops; their whole-file echoes do too
    assert rules(with_prelude("from einops import rearrange\nimport einops")) == []


# --- legitimate but unusual kernels ------------------------------------------------------------------
LEGIT: dict[str, str] = {
    "autotune_stack_meta_grid": HEADER + """
@triton.autotune(configs=[triton.Config({'BLOCK': 128}), triton.Config({'BLOCK': 256})], key=['n'])
@triton.jit
def tuned(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        grid = lambda META: (triton.cdiv(n, META['BLOCK']),)
        tuned[grid](x, y, n)
        return y
""",
    "helper_jit_and_two_kernels_launched_from_a_helper": """
import torch
from torch import nn
import triton
from triton import jit
import triton.language as tl


@jit
def _square(x):
    return x * x


@triton.jit
def square_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, _square(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)


@triton.heuristics({'EVEN': lambda args: args['n'] % args['BLOCK'] == 0})
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _launch(kernel, x, y, block=256):
    n = x.numel()
    grid = ((n + block - 1) // block,)
    kernel[grid](x, y, n, BLOCK=block)
    return y


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.block = triton.next_power_of_2(dim)

    def forward(self, x):
        tmp = torch.empty_like(x)
        out = torch.empty_like(x)
        _launch(square_kernel, x.view(-1), tmp.view(-1), block=self.block * 2)
        return self._finish(tmp, out)

    def _finish(self, tmp, out):
        n = tmp.numel()
        copy_kernel[(triton.cdiv(n, 128),)](tmp, out, n, BLOCK=128)
        return out
""",
    "linear_weights_passed_to_kernel_with_stride_grid": HEADER + """
class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.register_buffer("scale", torch.ones(out_features))

    def forward(self, x: torch.Tensor, steps: int = 2) -> torch.Tensor:
        M, K = x.shape
        N = self.linear.weight.shape[0]
        w = self.linear.weight.t().contiguous()
        b = self.linear.bias
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32), steps - 1)
        if x.stride(0) * 2 > K and b is not None and x.dim() == 2:
            relu_kernel[grid](x, out, M * N + x.stride(1), BLOCK=max(16, K // 2))
        relu_kernel[grid](w, b, self.scale, out, BLOCK=64)
        return out.view(M, N).to(x.device)
""",
    "integer_inputs_and_preallocated_buffer": HEADER + """
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = None

    def forward(self, idx, table):
        n = idx.numel()
        if self.out is None or self.out.shape[0] != n:
            self.out = torch.zeros(n, dtype=table.dtype, device=table.device)
        self.out.zero_()
        for i, t in enumerate([idx]):
            relu_kernel[(triton.cdiv(n, 256) + i,)](t, self.out, n, BLOCK=256)
        return self.out
""",
    "submodule_launching_its_own_kernel": HEADER + """
class TritonRelu(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 512),)](x, y, x.numel(), BLOCK=512)
        return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = TritonRelu()
        self.blocks = nn.ModuleList([TritonRelu() for _ in range(2)])

    def forward(self, x):
        x = self.act(x)
        for block in self.blocks:
            x = block(x)
        return x
""",
    "nested_launch_function_and_test_block": HEADER + """
import math


class ModelNew(nn.Module):
    def forward(self, x):
        def run(inp):
            out = torch.empty_like(inp)
            BLOCK = 2 ** int(math.log2(1024))
            relu_kernel[(triton.cdiv(inp.numel(), BLOCK),)](inp, out, inp.numel(), BLOCK=BLOCK)
            return out

        return run(x.reshape(-1)).view_as(x)


if __name__ == "__main__":
    x = torch.randn(8)
    print(torch.allclose(ModelNew()(x), torch.relu(x)))
""",
}


@pytest.mark.parametrize("name", sorted(LEGIT))
@pytest.mark.parametrize("policy", ["strict", "partial"])
def test_legitimate_unusual_kernel_passes(name, policy):
    assert check_static(LEGIT[name], compute_policy=policy) == []


BUILTIN = Path(__file__).resolve().parents[2] / "atrl" / "tasks" / "builtin"
SOLUTIONS = sorted(BUILTIN.rglob("*.solution.py"))


@pytest.mark.parametrize("path", SOLUTIONS, ids=[str(p.relative_to(BUILTIN)) for p in SOLUTIONS])
def test_builtin_solution_passes_static_checks(path):
    assert check_static(path.read_text()) == []


@pytest.mark.parametrize("statement", [
    "holder = []; holder.append(x); z = holder[0].clamp_min(0)",
    "held = {}; held.update(a=x); z = held['a'].exp()",
    "held = []; held.insert(0, x); z = held[0] * 2",
    "held = []; held.extend([x]); z = held[-1].sum()",
])
def test_a_tensor_put_into_a_container_by_a_method_is_still_a_tensor(statement):
    # assignment into a container (`held[0] = x`) was followed; these methods were not
    assert_fires(with_forward_line(statement), "static:pytorch-compute", statement)


@pytest.mark.parametrize("statement", [
    "shapes = []; shapes.append(x.shape); z = shapes[0][0] * 2",
    "outs = []; outs.append(torch.empty_like(x)); count = len(outs)",
])
def test_containers_of_non_tensors_or_of_allocations_stay_legitimate(statement):
    assert rules(with_forward_line(statement)) == []
