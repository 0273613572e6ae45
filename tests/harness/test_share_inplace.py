"""Bytes moved do not depend on writing in place (`atrl.harness.stages.provenance`): an in-place op
reads its operands and writes its result as its out-of-place form does, so doing a task's epilogue
in place in PyTorch buys no Triton share under the `partial` policy.

The unit tests record ops in this process on the CPU (Triton through its interpreter); the judge
tests run the real judge in a child process, as test_judge.py does.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
import triton
import triton.language as tl

from atrl.harness.stages.provenance import ProvenanceRule, decide, record_candidate_state, recording
from atrl.tasks.registry import get_task

PARTIAL = ProvenanceRule("partial", 0.5)


def torch_bytes(fn, *inputs) -> int:
    """Bytes moved by the PyTorch compute ops of `fn(*inputs)` (run on copies of the inputs)."""
    copies = [t.clone() for t in inputs]
    with torch.no_grad(), recording(verify_writes=False) as recorder:
        fn(*copies)
    return recorder.compute_work().bytes


H, V = torch.randn(64, 48), torch.randn(64, 48)
M = torch.rand(48)


@pytest.mark.parametrize("in_place, out_of_place", [
    (lambda h, v: h.sub_(v), lambda h, v: h - v),
    (lambda h, v: h.sub_(2.0), lambda h, v: h - 2.0),
    (lambda h, v: h.relu_(), lambda h, v: torch.relu(h)),
    (lambda h, v: torch.mul(h, v, out=h), lambda h, v: h * v),
    (lambda h, v: h.sub_(v).mul_(M).relu_(), lambda h, v: torch.relu((h - v) * M)),
], ids=["sub_", "sub_-scalar", "relu_", "mul-out-into-operand", "chain"])
def test_an_in_place_op_moves_the_bytes_of_its_out_of_place_form(in_place, out_of_place):
    assert torch_bytes(in_place, H, V) == torch_bytes(out_of_place, H, V) > 0


def test_an_op_writing_into_its_own_operand_keeps_that_operands_writers_on_the_data_path():
    # `torch.mul(h, 1, out=h)` reads h: the ReLU before it is still PyTorch work behind the output
    def forward(x):
        h = torch.relu(x)
        torch.mul(h, 1.0, out=h)
        out = torch.empty_like(h)
        copy_kernel[(triton.cdiv(h.numel(), 256),)](h, out, h.numel(), BLOCK=256)
        return out

    x = torch.randn(4, 512)
    reference = torch.relu(x.clone())
    with torch.no_grad(), recording(verify_writes=False) as ref_recorder:
        torch.relu(x.clone())
    with torch.no_grad(), recording() as recorder:
        record_candidate_state(recorder, torch.nn.Module(), [x])
        out = forward(x)
    recorder.finish([out])
    assert torch.equal(out, reference)
    names = [e.name for e in recorder.data_path([out])]
    assert "aten.relu" in names and "aten.mul" in names
    failure, share = decide(recorder, [out], PARTIAL, ref_recorder.compute_work())
    assert failure is not None and failure.error_class == "correctness:low-triton-share" and share == 0.0


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def sub_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) - tl.load(y_ptr + offs, mask=mask), mask=mask)


def test_a_triton_launch_moves_the_same_bytes_in_place_or_not():
    def launch_bytes(in_place: bool) -> int:
        h, v = H.clone(), V.clone()
        with torch.no_grad(), recording() as recorder:
            record_candidate_state(recorder, torch.nn.Module(), [h, v])
            out = h if in_place else torch.empty_like(h)
            sub_kernel[(triton.cdiv(h.numel(), 256),)](h, v, out, h.numel(), BLOCK=256)
        (launch,) = [e for e in recorder.events if e.kind == "triton"]
        return launch.bytes

    # it reads h and v (not the empty buffer) and writes the one argument whose storage changed
    assert launch_bytes(in_place=True) == launch_bytes(in_place=False) == (2 * H.numel() + V.numel()) * 4


# --- through the judge -------------------------------------------------------------------------------

# conv_block (partial): the convolutions may stay in PyTorch; group norm, ReLU and pooling are Triton's
CONV_BLOCK_PRELUDE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def group_norm_relu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, channels, plane, group_channels, eps,
                           BLOCK: tl.constexpr):
    # one program per (batch, group): a group's elements are contiguous in (B, C, H, W)
    pid = tl.program_id(0)
    group = pid % (channels // group_channels)
    n = group_channels * plane
    base = pid * n
    offs = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        total += tl.load(x_ptr + base + start + offs, mask=start + offs < n, other=0.0)
    mean = tl.sum(total, 0) / n
    squares = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        mask = start + offs < n
        d = tl.where(mask, tl.load(x_ptr + base + start + offs, mask=mask, other=0.0) - mean, 0.0)
        squares += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(squares, 0) / n + eps)
    for start in range(0, n, BLOCK):
        mask = start + offs < n
        channel = group * group_channels + (start + offs) // plane
        x = tl.load(x_ptr + base + start + offs, mask=mask, other=0.0)
        w = tl.load(w_ptr + channel, mask=mask, other=0.0)
        b = tl.load(b_ptr + channel, mask=mask, other=0.0)
        tl.store(y_ptr + base + start + offs, tl.maximum((x - mean) * rstd * w + b, 0.0), mask=mask)


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


def group_norm_relu(x, norm):
    x = x.contiguous()
    y = torch.empty_like(x)
    channels = x.shape[1]
    group_norm_relu_kernel[(x.shape[0] * norm.num_groups,)](
        x, norm.weight, norm.bias, y, channels, x.shape[2] * x.shape[3], channels // norm.num_groups, norm.eps,
        BLOCK=256)
    return y


def max_pool(x):
    b, c, h, w = x.shape
    y = torch.empty((b, c, h // 2, w // 2), device=x.device, dtype=x.dtype)
    n = y.numel()
    max_pool_kernel[(triton.cdiv(n, 256),)](x, y, h, w, h // 2, w // 2, n, BLOCK=256)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm1 = nn.GroupNorm(groups, out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.norm2 = nn.GroupNorm(groups, out_channels)
        self.pool = nn.MaxPool2d(2)
'''

CONV_BLOCK_HONEST = CONV_BLOCK_PRELUDE + '''
    def forward(self, x):
        h = group_norm_relu(F.conv2d(x, self.conv1.weight, self.conv1.bias, padding=1), self.norm1)
        h = group_norm_relu(F.conv2d(h, self.conv2.weight, self.conv2.bias, padding=1), self.norm2)
        return max_pool(h)
'''

# the second group norm and ReLU in PyTorch, their elementwise part in place: counted as moving half
# their bytes, this passed at a 57% share, while the same ops out of place scored 27%
CONV_BLOCK_IN_PLACE = CONV_BLOCK_PRELUDE + '''
    def forward(self, x):
        h = group_norm_relu(F.conv2d(x, self.conv1.weight, self.conv1.bias, padding=1), self.norm1)
        h = F.conv2d(h, self.conv2.weight, self.conv2.bias, padding=1)
        b, c = h.shape[:2]
        g = self.norm2.num_groups
        var, mean = torch.var_mean(h.view(b, g, -1), dim=2, unbiased=False)
        scale = ((var + self.norm2.eps).rsqrt().repeat_interleave(c // g, dim=1) * self.norm2.weight).view(b, c, 1, 1)
        shift = (self.norm2.bias - mean.repeat_interleave(c // g, dim=1) * scale.view(b, c)).view(b, c, 1, 1)
        h.mul_(scale).add_(shift).relu_()
        return max_pool(h)
'''

# the red team's pattern on a GEMM + ReLU task: GEMM and ReLU (in place) in PyTorch, a Triton copy
# of the result; this scored exactly the 50% threshold, its out-of-place form 0%
MATMUL_RELU_IN_PLACE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        h = F.linear(x, self.linear.weight, self.linear.bias).relu_()
        out = torch.empty_like(h)
        copy_kernel[(triton.cdiv(h.numel(), 1024),)](h, out, h.numel(), BLOCK=1024)
        return out
'''


@pytest.mark.slow
def test_an_epilogue_done_in_place_in_pytorch_is_rejected_under_partial_and_honest_triton_passes():
    from test_judge import interpreter_options, judge_in_child

    conv_block = get_task("builtin/conv_block")
    assert conv_block.compute_policy == "partial"
    # a GEMM + ReLU fusion task under partial, as KernelBench's level-2 tasks are judged
    matmul_relu = dataclasses.replace(get_task("builtin/matmul_bias_relu"), compute_policy="partial")
    jobs = [
        {"name": "conv-honest", "task": conv_block, "code": CONV_BLOCK_HONEST},
        {"name": "conv-in-place", "task": conv_block, "code": CONV_BLOCK_IN_PLACE},
        {"name": "matmul-honest", "task": matmul_relu, "code": matmul_relu.solution},
        {"name": "matmul-in-place", "task": matmul_relu, "code": MATMUL_RELU_IN_PLACE},
    ]
    verdicts = judge_in_child([{**job, "options": interpreter_options()} for job in jobs])
    for name in ("conv-honest", "matmul-honest"):
        assert verdicts[name]["ok"], (name, verdicts[name]["message"])
        assert verdicts[name]["correctness"]["triton_share"] == pytest.approx(1.0)
    for name in ("conv-in-place", "matmul-in-place"):
        verdict = verdicts[name]
        assert not verdict["ok"] and verdict["error_class"] == "correctness:low-triton-share", (name, verdict["message"])
        assert verdict["correctness"]["triton_share"] < 0.5
