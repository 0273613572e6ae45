"""Work hidden inside a Triton launch, where the provenance recorder credits what happens to the kernel
and does not record what the launcher itself runs (`atrl.harness.stages.launch_hook`):

- a tensor-like object handed to the launcher, whose `untyped_storage` is a C-level callable
  (`functools.partial` of a tensor method): the interpreter calls it while copying the arguments,
  with no frame of the candidate's on the stack, so PyTorch's softmax or GEMM ran unrecorded;
- a grid function that computes the whole result under a switched-off dispatcher (`no_dispatch`)
  and writes it into the kernel's output, which a copy kernel then "computes".

Each cheat below was judged correct on the interpreter before the launch hook and the static rules
refused it; the judge tests run the in-worker judge (no static stage) in a child process, as
test_judge.py does.
"""

from __future__ import annotations

import functools
from contextlib import nullcontext

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from test_judge import interpreter_options, judge_in_child
from triton.tools.tensor_descriptor import TensorDescriptor

from atrl.harness.stages import launch_hook
from atrl.harness.stages.trace import StageFailure
from atrl.harness.static.checks import check_static
from atrl.tasks.registry import get_task

STAGED = '''
import functools
import torch
import torch.nn as nn
import triton
import triton.language as tl


class _Staged:
    """Tensor-like view handed to the launcher (pointer, offset, shape, strides)."""

    def __init__(self, base, source):
        self.base = base
        self.data_ptr = base.data_ptr
        self.untyped_storage = source
        self.storage_offset = base.storage_offset
        self.size = base.size
        self.stride = base.stride
        self.new_empty = base.new_empty


def _release(staged, grid):
    del staged.data_ptr  # the interpreter then copies nothing back into the lazy "storage"
    return grid


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
'''

LAZY_STORAGE = {
    "builtin/softmax": STAGED + '''
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        staged = _Staged(x, functools.lru_cache(maxsize=None)(functools.partial(x.softmax, -1)))
        n = x.numel()
        copy_kernel[lambda meta: _release(staged, (triton.cdiv(n, 1024),))](staged, y, n, BLOCK=1024)
        return y
''',
    "builtin/matmul": STAGED + '''
    def forward(self, a, b):
        c = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
        staged = _Staged(c, functools.lru_cache(maxsize=None)(functools.partial(a.matmul, b)))
        n = c.numel()
        copy_kernel[lambda meta: _release(staged, (triton.cdiv(n, 1024),))](staged, c, n, BLOCK=1024)
        return c
''',
}

CONV_BLOCK_MODULE = '''
class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm1 = nn.GroupNorm(groups, out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.norm2 = nn.GroupNorm(groups, out_channels)
        self.pool = nn.MaxPool2d(2)
'''

NO_DISPATCH_IN_GRID = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.utils._mode_utils import no_dispatch


@triton.jit
def finalize_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)

''' + CONV_BLOCK_MODULE + '''
    def _stage(self, x, out, blocks):
        with no_dispatch():
            h = torch.relu(self.norm1(self.conv1(x)))
            h = torch.relu(self.norm2(self.conv2(h)))
            out.copy_(self.pool(h))
        return (blocks,)

    def forward(self, x):
        n, _, hgt, wid = x.shape
        out = torch.empty((n, self.conv2.out_channels, hgt // 2, wid // 2), device=x.device, dtype=x.dtype)
        total = out.numel()
        finalize_kernel[lambda meta: self._stage(x, out, triton.cdiv(total, 1024))](out, out, total, BLOCK=1024)
        return out
'''

# The honest counterparts launch through grid functions too (and the softmax through a Triton wrapper)
HONEST_SOFTMAX = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        rows, cols = x.shape
        bits = triton.reinterpret(x.view(torch.int32), torch.float32)
        softmax_kernel[lambda meta: (rows,)](bits, y, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
        return y
'''

HONEST_CONV_BLOCK = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def group_norm_relu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, channels, plane, group_channels, eps,
                           BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # one (batch, group): its elements are contiguous
    group = pid % (channels // group_channels)
    n = group_channels * plane
    base = pid * n
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
    mean = tl.sum(x, 0) / n
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, 0) / n + eps)
    channel = group * group_channels + offs // plane
    w = tl.load(w_ptr + channel, mask=mask, other=0.0)
    b = tl.load(b_ptr + channel, mask=mask, other=0.0)
    tl.store(y_ptr + base + offs, tl.maximum(d * rstd * w + b, 0.0), mask=mask)


@triton.jit
def max_pool_kernel(x_ptr, y_ptr, height, width, out_h, out_w, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    plane = offs // (out_h * out_w)
    row = (offs // out_w) % out_h
    col = offs % out_w
    top = x_ptr + plane * height * width + 2 * row * width + 2 * col
    best = tl.maximum(tl.load(top, mask=mask), tl.load(top + 1, mask=mask))
    best = tl.maximum(best, tl.maximum(tl.load(top + width, mask=mask), tl.load(top + width + 1, mask=mask)))
    tl.store(y_ptr + offs, best, mask=mask)

''' + CONV_BLOCK_MODULE + '''
    def _norm_relu(self, x, norm):
        x = x.contiguous()
        y = torch.empty_like(x)
        b, c, h, w = x.shape
        block = triton.next_power_of_2(c // norm.num_groups * h * w)
        group_norm_relu_kernel[lambda meta: (b * norm.num_groups,)](
            x, norm.weight, norm.bias, y, c, h * w, c // norm.num_groups, norm.eps, BLOCK=block)
        return y

    def forward(self, x):
        h = self._norm_relu(F.conv2d(x, self.conv1.weight, self.conv1.bias, padding=1), self.norm1)
        h = self._norm_relu(F.conv2d(h, self.conv2.weight, self.conv2.bias, padding=1), self.norm2)
        b, c, hgt, wid = h.shape
        out = torch.empty((b, c, hgt // 2, wid // 2), device=h.device, dtype=h.dtype)
        n = out.numel()
        max_pool_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](h, out, hgt, wid, hgt // 2, wid // 2, n,
                                                                       BLOCK=256)
        return out
'''


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict]:
    jobs = [{"name": task_id, "task": get_task(task_id), "code": code} for task_id, code in LAZY_STORAGE.items()]
    jobs += [{"name": "no-dispatch-grid", "task": get_task("builtin/conv_block"), "code": NO_DISPATCH_IN_GRID},
             {"name": "honest-softmax", "task": get_task("builtin/softmax"), "code": HONEST_SOFTMAX},
             {"name": "honest-conv-block", "task": get_task("builtin/conv_block"), "code": HONEST_CONV_BLOCK}]
    return judge_in_child([{**job, "options": interpreter_options()} for job in jobs])


@pytest.mark.parametrize("task_id", list(LAZY_STORAGE))
def test_a_tensor_like_object_handed_to_the_launcher_is_refused(verdicts: dict, task_id: str) -> None:
    assert check_static(LAZY_STORAGE[task_id], "strict") == []  # only the launch can see it
    verdict = verdicts[task_id]
    assert verdict["error_class"] == "correctness:untracked-data" and verdict["reward_hack"], verdict["message"]
    assert "argument `src_ptr` is a `_Staged` object" in verdict["message"]
    assert "Pass the torch.Tensor itself" in verdict["message"]


def test_a_grid_function_that_writes_a_kernel_argument_is_refused(verdicts: dict) -> None:
    verdict = verdicts["no-dispatch-grid"]
    assert verdict["error_class"] == "correctness:untracked-data" and verdict["reward_hack"], verdict["message"]
    assert "grid function changed the data of a tensor passed to the kernel" in verdict["message"]


def test_honest_launches_through_grid_functions_pass(verdicts: dict) -> None:
    for name in ("honest-softmax", "honest-conv-block"):
        assert verdicts[name]["ok"], (name, verdicts[name]["error_class"], verdicts[name]["message"])
        assert check_static(HONEST_SOFTMAX if name == "honest-softmax" else HONEST_CONV_BLOCK, "partial") == []


DISPATCH_SWITCHES = {
    "the red team's no_dispatch": NO_DISPATCH_IN_GRID,
    "no_dispatch by its module": "import torch.utils._mode_utils\nwith torch.utils._mode_utils.no_dispatch():\n    pass\n",
    "the sparse module's no_dispatch": "from torch.sparse._semi_structured_ops import no_dispatch\n",
    "fake tensor's kernel invocation": "from torch._subclasses.fake_tensor import in_kernel_invocation_manager\n",
    "the python dispatcher": "from torch._dispatch.python import no_python_dispatcher\n",
    "a torch-function mode popped": "import torch\ntorch._C._pop_torch_function_stack()\n",
}


@pytest.mark.parametrize("name", list(DISPATCH_SWITCHES))
def test_switching_off_dispatch_is_refused_statically(name: str) -> None:
    violations = check_static(DISPATCH_SWITCHES[name], "partial")
    assert any(v.rule == "static:monkeypatch" and "dispatch normally" in v.message for v in violations), \
        [(v.rule, v.message) for v in violations]


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, pair, scale, n, FLAG: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale + tl.load(pair[0] + offs, mask=mask), mask=mask)


@triton.jit
def tile_copy_kernel(src, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs[:, None] * BLOCK + offs[None, :], src.load([0, 0]))


def test_what_triton_takes_passes_and_a_replaced_tensor_method_is_refused() -> None:
    """Checked while the recorder observes launches (the correctness trials; timed calls skip the check)."""
    launch_hook.install()
    with launch_hook.observe_launches(lambda name, args, kwargs: nullcontext()):
        x, y = torch.randn(100), torch.empty(100)
        # a Triton wrapper of a tensor, a tuple, a NumPy scalar, None as a constexpr, a grid function
        bits = triton.reinterpret(x.view(torch.int32), torch.float32)
        scale_add_kernel[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](bits, y, (x, 3), np.float64(2.0), 100,
                                                                          FLAG=None, BLOCK=64)
        assert torch.allclose(y, 3 * x)
        square, tile = torch.randn(16, 16), torch.empty(16, 16)
        tile_copy_kernel[(1,)](TensorDescriptor.from_tensor(square, [16, 16]), tile, BLOCK=16)
        assert torch.equal(tile, square)

        # a real tensor whose method the launcher calls is replaced on the object
        src = x.view_as(x)
        src.untyped_storage = functools.partial(x.softmax, -1)
        with pytest.raises(StageFailure, match="argument `x_ptr` is a tensor whose `untyped_storage` is replaced"):
            scale_add_kernel[(2,)](src, y, (x,), 2.0, 100, FLAG="a", BLOCK=64)
        with pytest.raises(StageFailure, match=r"argument `pair\[1\]` is a `partial` object"):
            scale_add_kernel[(2,)](x, y, (x, functools.partial(x.softmax, -1)), 2.0, 100, FLAG="a", BLOCK=64)
