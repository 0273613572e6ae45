"""Who computed the result (`atrl.harness.stages.provenance`): the recorded data path of one forward
call, and the decision under the strict and partial policies.

The recorder tests run in this process on the CPU through the Triton interpreter (the kernels
below are the tests' own); the judge tests run the real judge in a child process, as
test_judge.py does.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from torch.utils._python_dispatch import _disable_current_modes

from atrl.harness.stages.provenance import (
    ProvenanceRule,
    Work,
    decide,
    fingerprint,
    record_candidate_state,
    recording,
)
from atrl.tasks.builtin_suite import load_builtin_task
from atrl.tasks.task import Task

ADVERSARIAL = Path(__file__).resolve().parents[1] / "adversarial"
STRICT = ProvenanceRule("strict", 0.5)
PARTIAL = ProvenanceRule("partial", 0.5)


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


def triton_relu(x: torch.Tensor, out: torch.Tensor | None = None, n: int | None = None) -> torch.Tensor:
    out = torch.empty_like(x) if out is None else out
    n = x.numel() if n is None else n
    relu_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
    return out


def reference_work(fn, *inputs) -> Work:
    copies = [t.clone() for t in inputs]  # as the judge does: the reference runs on its own copy
    with torch.no_grad(), recording(verify_writes=False) as recorder:
        fn(*copies)
    return recorder.compute_work()


def judged(forward, inputs: list, rule: ProvenanceRule, reference: Work, state: object = None):
    """(failure or None, Triton share) of one call of `forward(*inputs)`."""
    model = torch.nn.Module()
    if state is not None:
        model.state = state
    with torch.no_grad(), recording() as recorder:
        record_candidate_state(recorder, model, inputs)
        output = forward(*inputs)
    outputs = [output] if isinstance(output, torch.Tensor) else list(output)
    recorder.finish(outputs)
    return decide(recorder, outputs, rule, reference)


X = torch.randn(4, 512)
RELU_WORK = reference_work(torch.relu, X)


def test_the_reference_work_counts_compute_ops_only():
    # relu moves its input and output
    assert RELU_WORK == Work(bytes=2 * X.numel() * 4, flops=X.numel())
    assert not RELU_WORK.movement_only
    # a copy is counted apart from compute
    assert reference_work(lambda x: torch.relu(x).clone(), X) == Work(
        bytes=2 * X.numel() * 4, flops=X.numel(), copy_bytes=2 * X.numel() * 4)
    a, b = torch.randn(8, 16), torch.randn(16, 4)
    assert reference_work(torch.matmul, a, b).flops == 2 * 8 * 16 * 4


def test_a_pure_triton_kernel_passes_under_both_policies():
    for rule in (STRICT, PARTIAL):
        failure, share = judged(lambda x: triton_relu(x), [X], rule, RELU_WORK)
        assert failure is None and share == 1.0


def test_views_copies_casts_and_allocation_are_not_compute():
    def forward(x):
        staged = x.t().contiguous().t().reshape(-1).to(torch.float64).to(torch.float32).clone()
        staged.unsqueeze_(0).squeeze_(0)  # in place, but metadata only
        out = torch.zeros_like(staged)
        triton_relu(staged, out)
        return out.view(x.shape)

    failure, share = judged(forward, [X], STRICT, RELU_WORK)
    assert failure is None and share == 1.0


@triton.jit
def transpose_kernel(x_ptr, y_ptr, rows, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # flat index into y (cols x rows)
    mask = offs < rows * cols
    tl.store(y_ptr + offs, tl.load(x_ptr + (offs % rows) * cols + offs // rows, mask=mask), mask=mask)


@triton.jit
def noop_kernel(y_ptr, BLOCK: tl.constexpr):
    tl.program_id(0)  # writes nothing


def test_when_the_reference_only_moves_data_a_pytorch_copy_is_its_work():
    transpose_work = reference_work(lambda x: x.t().contiguous(), X)
    assert transpose_work.movement_only and transpose_work.bytes == 0

    def copy_then_noop(x):  # PyTorch transposes; the launch writes nothing
        y = x.t().contiguous()
        noop_kernel[(1,)](y, BLOCK=16)
        return y

    failure, share = judged(copy_then_noop, [X], STRICT, transpose_work)
    assert failure is not None and failure.error_class == "correctness:pytorch-compute"
    assert "data movement" in failure.message and "aten.clone" in failure.message
    failure, share = judged(copy_then_noop, [X], PARTIAL, transpose_work)
    assert failure is not None and failure.error_class == "correctness:low-triton-share" and share < 0.5

    def triton_transpose(x):
        y = torch.empty(x.shape[1], x.shape[0], device=x.device, dtype=x.dtype)
        transpose_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.shape[0], x.shape[1], BLOCK=256)
        return y

    for rule in (STRICT, PARTIAL):
        assert judged(triton_transpose, [X], rule, transpose_work) == (None, 1.0)


def test_a_layout_copy_before_the_kernel_of_a_compute_task_stays_free():
    def forward(x):  # the same copy as above, now layout work around the reference's computation
        return triton_relu(x.t().contiguous()).t()

    assert judged(forward, [X], STRICT, RELU_WORK) == (None, 1.0)


@pytest.mark.parametrize("compute, op", [
    (lambda x, y: x.clamp(min=0), "aten.clamp"),
    (lambda x, y: torch.ops.aten.relu.default(x), "aten.relu"),
    (lambda x, y: torch.nn.ReLU()(x), "aten.relu"),
    (lambda x, y: torch.where(x > 0, x, torch.zeros_like(x)), "aten.where"),
    (lambda x, y: y.add_(0.0), "aten.add_"),  # in place on the Triton output: still on the path
])
def test_pytorch_compute_on_the_data_path_fails_strict_and_names_the_op(compute, op):
    def forward(x):
        y = triton_relu(x)
        return compute(x, y)

    failure, share = judged(forward, [X], STRICT, RELU_WORK)
    assert failure is not None and failure.error_class == "correctness:pytorch-compute"
    assert op in failure.message


def test_pytorch_compute_off_the_data_path_is_not_counted():
    def forward(x):
        _ = torch.exp(x)  # computed and dropped
        return triton_relu(x)

    assert judged(forward, [X], STRICT, RELU_WORK)[0] is None


def test_a_fill_with_a_tensor_value_carries_that_value_onto_the_path():
    def forward(x):
        y = triton_relu(x)
        total = torch.relu(x).sum()  # PyTorch computes the result, a fill hands it over
        return y[:1, :1].fill_(total)

    failure, _ = judged(forward, [X], STRICT, RELU_WORK)
    assert failure is not None and failure.error_class == "correctness:pytorch-compute"
    assert "aten.sum" in failure.message or "aten.relu" in failure.message


def test_a_value_read_to_the_host_counts_as_on_the_path():
    def forward(x):
        peak = float(x.abs().max())  # PyTorch compute that reaches the kernel as a Python scalar
        return triton_relu(x / 1.0 if peak > 0 else x)

    failure, _ = judged(forward, [X], STRICT, RELU_WORK)
    assert failure is not None and "aten.abs" in failure.message


def test_partial_share_is_one_minus_pytorch_bytes_over_the_reference_bytes():
    def forward(x):
        half = x.shape[0] // 2
        out = torch.empty_like(x)
        triton_relu(x[:half].contiguous(), out[:half], half * x.shape[1])
        out[half:] = torch.relu(x[half:])
        return out

    failure, share = judged(forward, [X], PARTIAL, RELU_WORK)
    assert share == pytest.approx(0.5)  # torch.relu moved half the reference's bytes
    assert failure is None
    failure, _ = judged(forward, [X], ProvenanceRule("partial", 0.6), RELU_WORK)
    assert failure is not None and failure.error_class == "correctness:low-triton-share"
    assert "50%" in failure.message and "aten.relu" in failure.message


# A KernelBench-style fusion at proportions like its default sizes: the weight dominates the bytes
A, W = torch.randn(16, 512), torch.randn(512, 512)


def gemm_relu_reference(a, w):
    return torch.relu(a @ w)


GEMM_RELU_WORK = reference_work(gemm_relu_reference, A, W)


def test_a_gemm_kept_in_pytorch_with_its_epilogue_in_triton_passes_partial():
    def fused(a, w):
        return triton_relu((a @ w).contiguous())

    def all_pytorch_but_a_copy(a, w):  # the epilogue in PyTorch too: Triton only copies
        return triton_relu(torch.relu(a @ w).abs())

    def epilogue_by_an_extra_gemm(a, w):  # more library work than the reference's own
        y = a @ w
        return triton_relu((y @ torch.eye(512)).contiguous())

    assert GEMM_RELU_WORK.library_bytes > 0.9 * GEMM_RELU_WORK.bytes  # the GEMM is most of the bytes
    failure, share = judged(fused, [A, W], PARTIAL, GEMM_RELU_WORK)
    assert failure is None and share == pytest.approx(1.0)
    failure, share = judged(all_pytorch_but_a_copy, [A, W], PARTIAL, GEMM_RELU_WORK)
    assert failure is not None and failure.error_class == "correctness:low-triton-share" and share == 0.0
    assert "GEMMs/convolutions" in failure.message
    failure, _ = judged(epilogue_by_an_extra_gemm, [A, W], PARTIAL, GEMM_RELU_WORK)
    assert failure is not None and failure.error_class == "correctness:low-triton-share"
    failure, _ = judged(fused, [A, W], STRICT, GEMM_RELU_WORK)  # strict still rejects the GEMM
    assert failure is not None and failure.error_class == "correctness:pytorch-compute"


def test_a_library_exemption_needs_the_references_own_gemm():
    def transposed(a, w):  # the same GEMM, computed as (w.T @ a.T).T
        return triton_relu((w.t() @ a.t()).t().contiguous())

    def folded_into_matrix_vector_products(a, w):  # other GEMMs, within the reference's GEMM bytes
        y = a @ (w @ torch.ones(w.shape[1], 1))
        return triton_relu(y.contiguous())

    assert judged(transposed, [A, W], PARTIAL, GEMM_RELU_WORK)[0] is None
    reference = reference_work(lambda a, w: torch.relu(a @ w).sum(dim=1, keepdim=True), A, W)
    failure, share = judged(folded_into_matrix_vector_products, [A, W], PARTIAL, reference)
    assert failure is not None and failure.error_class == "correctness:low-triton-share", share


def test_a_convolution_kept_in_pytorch_without_its_bias_is_the_references_convolution():
    x, weight, bias = torch.randn(2, 8, 16, 16), torch.randn(16, 8, 3, 3), torch.randn(16)
    reference = reference_work(lambda x: torch.relu(torch.nn.functional.conv2d(x, weight, bias)), x)

    def bias_in_triton(x):  # the bias goes into the epilogue (relu here stands for the fused kernel)
        y = torch.nn.functional.conv2d(x, weight)
        return triton_relu(y.contiguous())

    assert judged(bias_in_triton, [x], PARTIAL, reference, state=weight)[0] is None


def test_a_task_that_is_only_a_gemm_gives_no_room_to_a_pytorch_gemm():
    def in_pytorch(a, w):
        return triton_relu((a @ w).contiguous().abs())  # abs >= 0: relu leaves it, a Triton copy

    failure, share = judged(in_pytorch, [A, W], PARTIAL, reference_work(torch.matmul, A, W))
    assert failure is not None and failure.error_class == "correctness:low-triton-share" and share < 0.1
    assert "may stay in PyTorch" not in failure.message  # nothing may stay here


def test_numpy_results_are_untracked_data():
    def from_numpy(x):
        triton_relu(x, torch.empty(256), 256)
        return torch.from_numpy(np.maximum(x.numpy(), 0.0))

    def through_a_view(x):
        # the kernel writes the first 256 elements, numpy the rest: NaN there first, so the numpy
        # write changes bytes even where freed memory happened to hold relu(x) already
        y = triton_relu(x, torch.full_like(x, float("nan")), n=256)
        np.maximum(x.numpy(), 0.0, out=y.numpy())
        return y

    def from_a_python_list(x):
        triton_relu(x, n=256)
        return torch.tensor([[max(v, 0.0) for v in row] for row in x.tolist()])

    def a_scalar_through_a_kernel(x):
        total = torch.tensor([sum(x.reshape(-1).tolist())])  # the whole (one-element) result
        out = torch.empty(1)
        triton_relu(total, out, 1)
        return out

    for forward in (from_numpy, through_a_view, from_a_python_list, a_scalar_through_a_kernel):
        failure, _ = judged(forward, [X], PARTIAL, RELU_WORK)
        assert failure is not None and failure.error_class == "correctness:untracked-data", forward.__name__


def test_compute_that_escapes_the_dispatch_mode_is_untracked():
    def into_a_recorded_buffer(x):
        y = triton_relu(x, n=256)
        with _disable_current_modes():
            y.copy_(torch.relu(x) + 1.0)  # + 1: a reused block may already hold relu(x)
        return y

    def into_a_new_tensor(x):
        y = triton_relu(x, n=256)
        with _disable_current_modes():
            z = torch.relu(x)
        y.copy_(z)
        return y

    for forward in (into_a_recorded_buffer, into_a_new_tensor):
        failure, _ = judged(forward, [X], PARTIAL, RELU_WORK)
        assert failure is not None and failure.error_class == "correctness:untracked-data", forward.__name__


def test_a_small_python_constant_is_not_untracked():
    def forward(x):
        scale = torch.tensor([1.0])
        out = triton_relu(x)
        triton_relu(scale, out, 1)  # the constant reaches the output through a kernel
        return out

    assert judged(forward, [X], STRICT, RELU_WORK)[0] is None


def test_shape_arithmetic_on_python_values_is_not_pytorch_compute():
    def forward(x):
        rows = int(torch.tensor(x.shape[:1]).prod().item())  # the product of a shape, in PyTorch
        return triton_relu(x, n=rows * x.shape[1])

    assert judged(forward, [X], STRICT, RELU_WORK)[0] is None


@pytest.mark.parametrize("forward", [
    lambda x: triton_relu(x) * torch.tensor([2.0]),  # Python values meet tensor data
    lambda x: triton_relu(x) + torch.arange(x.shape[1], dtype=x.dtype) * 0.0,  # a constant, not Python values
])
def test_compute_with_python_values_on_tensor_data_is_still_pytorch_compute(forward):
    failure, _ = judged(forward, [X], STRICT, RELU_WORK)
    assert failure is not None and failure.error_class == "correctness:pytorch-compute"


def test_a_result_computed_from_python_values_alone_is_untracked_data():
    values = X.relu().flatten().tolist()

    def forward(x):  # the result itself, carried by Python values and finished by PyTorch
        out = torch.empty_like(x)
        triton_relu((torch.tensor(values) * 1.0).view(x.shape), out)
        return out

    failure, _ = judged(forward, [X], STRICT, RELU_WORK)
    assert failure is not None and failure.error_class == "correctness:untracked-data"


def test_an_output_no_triton_launch_wrote_fails():
    cached = triton_relu(X)

    def forward(x):
        triton_relu(x, torch.empty(256), 256)
        return cached.clone()

    failure, _ = judged(forward, [X], PARTIAL, RELU_WORK, state={"cache": cached})
    assert failure is not None and failure.error_class == "correctness:no-triton-output"
    assert "module state" in failure.message


def test_an_empty_output_needs_no_launch():
    # NPUKernelBench has zero-element shape cases: a kernel with nothing to write writes nothing
    empty = torch.empty(16, 0, 8)

    def forward(x):
        out = torch.empty_like(x)
        relu_kernel[(1,)](x, out, 0, BLOCK=256)  # a launch whose one program stores nothing
        return out

    for rule in (STRICT, PARTIAL):
        assert judged(forward, [empty], rule, reference_work(torch.relu, empty))[0] is None


def test_module_state_written_by_triton_is_a_fine_output_buffer():
    buffer = torch.empty_like(X)
    assert judged(lambda x: triton_relu(x, buffer), [X], STRICT, RELU_WORK, state=[buffer])[0] is None


def _zero_output(nargs: dict) -> None:
    nargs["out_ptr"].zero_()


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, pre_hook=_zero_output)], key=["n"])
@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))


def test_an_autotuned_launch_is_one_launch_with_its_hooks_inside():
    def forward(x):
        out = torch.empty(1)
        sum_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
        return out

    with torch.no_grad(), recording() as recorder:
        record_candidate_state(recorder, torch.nn.Module(), [X])
        out = forward(X)
    recorder.finish([out])
    # the config's pre-hook zero_ is part of the launch (so, on a GPU, are the benchmark's tensors)
    assert [e.kind for e in recorder.events if e.kind not in ("input", "state")] == ["constant", "triton"]
    assert decide(recorder, [out], STRICT, reference_work(torch.sum, X))[0] is None


def test_fingerprint_changes_with_one_byte_and_with_a_permutation():
    t = torch.arange(1024, dtype=torch.float32)
    before = fingerprint(t)
    t.view(torch.uint8)[5] ^= 1
    assert fingerprint(t) != before
    u = torch.arange(1024, dtype=torch.float32)
    same = fingerprint(u)
    u.copy_(u.flip(0))
    assert fingerprint(u) != same


def test_a_fingerprint_over_many_rows_sees_a_byte_in_the_tail_rows_swapped_and_words_moved(monkeypatch):
    import atrl.harness.stages.provenance as provenance

    monkeypatch.setattr(provenance, "_ROW_WORDS", 64)
    t = torch.randn(1000)
    same = t.clone()
    assert fingerprint(t) == fingerprint(same)
    t.view(torch.uint8)[-1] ^= 1  # the leftover words after the last whole row
    assert fingerprint(t) != fingerprint(same)
    t = same.clone()
    t.view(torch.uint8)[3] ^= 1  # the first row
    assert fingerprint(t) != fingerprint(same)
    swapped = torch.cat([same[64:128], same[:64], same[128:]])
    assert fingerprint(swapped) != fingerprint(same)
    for i, j in ((0, 64 * 3), (5, 9), (7, 64 * 2 + 20)):  # same column, same row, neither
        moved = same.clone()
        moved[i], moved[j] = same[j], same[i]
        assert fingerprint(moved) != fingerprint(same), (i, j)
    odd = torch.arange(1001, dtype=torch.uint8)  # not a whole number of words: bytes
    before = fingerprint(odd)
    odd[1000] += 1
    assert fingerprint(odd) != before and fingerprint(torch.empty(0)) == (0, 0)


# --- through the judge -------------------------------------------------------------------------------

def _adversarial(name: str) -> tuple[object, str]:
    spec = importlib.util.spec_from_file_location("adversarial_runner", ADVERSARIAL / "runner.py")
    runner = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("adversarial_runner", runner)
    spec.loader.exec_module(runner)
    case = runner.load_case(next(ADVERSARIAL.glob(f"*/{name}.py")))
    return runner.resolve_task(case.task), case.path.read_text()


def test_a_conv_kept_in_pytorch_passes_partial_at_any_threshold_but_fails_strict():
    from test_judge import interpreter_options, judge_in_child

    task, code = _adversarial("partial_conv_fused_epilogue")
    jobs = [{"name": name, "task": task, "code": code, "options": interpreter_options(**options)}
            for name, options in [("partial", {}), ("strict", {"compute_policy": "strict"}),
                                  ("high", {"coverage_threshold": 0.9})]]
    verdicts = judge_in_child(jobs)
    partial = verdicts["partial"]
    assert partial["ok"], partial["message"]
    # the reference's own convolution may stay in PyTorch: Triton does all of the rest
    assert partial["correctness"]["triton_share"] == pytest.approx(1.0)
    assert verdicts["high"]["ok"], verdicts["high"]["message"]
    strict = verdicts["strict"]
    assert strict["error_class"] == "correctness:pytorch-compute" and strict["reward_hack"]
    assert "aten.convolution" in strict["message"]


ADD_INTO_X_TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y, scale):
        x.add_(y * scale)
        return x


def get_inputs():
    return [torch.randn(2048), torch.randn(2048), torch.rand(1) + 0.5]


def get_init_inputs():
    return []
"""

ADD_INTO_X = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_into_kernel(x_ptr, y_ptr, scale, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x + tl.load(y_ptr + offs, mask=mask) * scale, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, y, scale):
        # `scale` is read on the host, never written: an input only, not a result to trace
        add_into_kernel[(triton.cdiv(x.numel(), 512),)](x, y, float(scale), x.numel(), BLOCK=512)
        return x
"""


def test_in_place_tasks_pass_the_same_storage_call_and_their_read_only_inputs_are_no_results():
    from test_judge import interpreter_options, judge_in_child

    relu = load_builtin_task(ADVERSARIAL / "tasks" / "relu_inplace.py", level=1)
    relu = dataclasses.replace(relu, id="adversarial/relu_inplace")
    add = Task(id="test/add_into_x", suite="test", name="add_into_x", level=1, source=ADD_INTO_X_TASK,
               reference_mutates_inputs=True)
    jobs = [{"name": "relu", "task": relu, "code": (ADVERSARIAL / "legit" / "inplace_relu.py").read_text(),
             "options": interpreter_options()},
            {"name": "add", "task": add, "code": ADD_INTO_X, "options": interpreter_options()}]
    for name, verdict in judge_in_child(jobs).items():
        assert verdict["ok"], (name, verdict["error_class"], verdict["message"])


def _judged_around_a_launch(forward) -> object:
    """The strict decision on `forward(x, recorder)`, which opens a launch of its own on the recorder
    (as the launch hook does) and runs there what a launcher or a callback would."""
    with torch.no_grad(), recording() as recorder:
        record_candidate_state(recorder, torch.nn.Module(), [X])
        out = forward(X, recorder)
    recorder.finish([out])
    return decide(recorder, [out], STRICT, RELU_WORK)[0]


def test_a_launchers_copy_of_a_tensor_computed_before_keeps_that_computation_on_the_path():
    """Inside a launch, data movement with no candidate frame is the launcher's own, but what it
    reads is read by the launch."""
    def forward(x, recorder):
        computed = torch.relu(x)
        out = torch.empty_like(x)
        with recorder.launch("copy_kernel", (out,), {}):
            out.copy_(computed)  # as a callback's `functools.partial(out.copy_, computed)` would
        return out

    failure = _judged_around_a_launch(forward)
    assert failure is not None and "aten.relu" in failure.message


def test_a_computing_op_inside_a_launch_is_recorded_as_pytorch():
    def forward(x, recorder):
        out = triton_relu(x)
        with recorder.launch("finish_kernel", (out,), {}):
            torch.exp_(out)  # no candidate frame on the stack, yet no launcher computes
        return out

    failure = _judged_around_a_launch(forward)
    assert failure is not None and "aten.exp_" in failure.message


def test_tensor_values_of_a_constant_op_are_read():
    def forward(x):
        total = torch.relu(x).sum()
        line = torch.linspace(total, total, 1)  # `linspace.Tensor_Tensor`: the values are data in
        out = torch.empty(1)
        triton_relu(line, out)
        return out

    failure, _ = judged(forward, [X], STRICT, reference_work(lambda x: torch.relu(x).sum(), X))
    assert failure is not None and failure.error_class == "correctness:pytorch-compute"


def test_a_tensor_computed_inside_a_launch_feeds_the_launch():
    """On a GPU no launcher op touches a tensor a callback made and handed to the kernel as an
    argument the observer never saw: what ran inside the launch is among the launch's inputs."""
    def forward(x, recorder):
        out = torch.empty_like(x)
        with recorder.launch("finish_kernel", (x, out), {}):
            torch.exp(x)  # a heuristic's new tensor; the kernel would read it
        return out

    failure = _judged_around_a_launch(forward)
    assert failure is not None and "aten.exp" in failure.message


def test_the_candidates_uninitialised_allocations_start_as_nan():
    """A block handed out again would still hold a freed PyTorch result, recorded as a constant."""
    with torch.no_grad(), recording():
        floats, ints, like = torch.empty(64), torch.empty(64, dtype=torch.int32), torch.empty_like(X)
    assert torch.isnan(floats).all() and torch.isnan(like).all()
    assert (ints == torch.iinfo(torch.int32).max).all()


def test_a_gemm_that_scales_its_result_is_not_the_references_plain_gemm():
    """`x @ w * s + x @ w` is `addmm(b, x, w, beta=1+s, alpha=1+s)`: the epilogue folded into the
    library call's scales, Triton only copying, is PyTorch doing the epilogue."""
    bias = torch.randn(A.shape[0], W.shape[1])

    def reference(a, w, b):
        y = torch.addmm(b, a, w)
        return y * 0.5 + y

    def scaled_addmm(a, w, b):
        return triton_relu(torch.addmm(b, a, w, beta=1.5, alpha=1.5))

    def plain_addmm_then_triton(a, w, b):
        return triton_relu(torch.addmm(b, a, w))

    work = reference_work(reference, A, W, bias)
    failure, share = judged(scaled_addmm, [A, W, bias], PARTIAL, work)
    assert failure is not None and failure.error_class == "correctness:low-triton-share", share
    assert judged(plain_addmm_then_triton, [A, W, bias], PARTIAL, work)[0] is None
