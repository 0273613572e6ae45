"""The correctness and timed-output checks of inputs (`run_trials`, `check_trial`, `profile_candidate`)
for tasks whose reference updates its inputs in place (`reference_mutates_inputs`) and for tasks
whose reference does not.

Everything runs in this process on the CPU through the Triton interpreter: the candidates here
are the tests' own, so no worker is needed.
"""

from __future__ import annotations

import gc
import itertools
import textwrap
import warnings

import pytest
import torch

from atrl.backends.interpreter import InterpreterBackend
from atrl.harness.stages import profile
from atrl.harness.stages.correctness import CandidateRunner, run_trials
from atrl.harness.stages.loading import (
    LoadedModels,
    build_models,
    import_candidate,
    load_task_module,
    write_candidate,
)
from atrl.harness.stages.trace import StageFailure
from atrl.harness.verdict import CorrectnessStats
from atrl.tasks.task import Task

_TASK_SOURCE = """
import torch
import torch.nn as nn

N = 3000


class Model(nn.Module):
    def forward(self, x):
        {body}


def get_inputs():
    return [{draw}]


def get_init_inputs():
    return []
"""


def make_task(name: str, body: str, mutates: bool, draw: str = "torch.randn(N)") -> Task:
    """A one-input task whose reference forward is `body`."""
    source = _TASK_SOURCE.format(body=body, draw=draw)
    return Task(id=f"test/{name}", suite="test", name=name, level=1, source=source,
                reference_mutates_inputs=mutates)


RELU_INPLACE = make_task("relu_inplace", "torch.relu_(x)\n        return x", mutates=True)
RELU = make_task("relu", "return torch.relu(x)", mutates=False)
INCREMENT_INPLACE = make_task("increment_inplace", "x.add_(1)\n        return x", mutates=True,
                              draw="torch.randint(0, 100, (N,))")

_CANDIDATE = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    {stores}


class ModelNew(nn.Module):
    def forward(self, x):
        {forward}
        kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return {returns}
"""


def candidate(stores: str, forward: str = "y = x", returns: str = "x") -> str:
    """A one-kernel candidate: `stores` (kernel lines, x loaded) write through x_ptr and/or y_ptr;
    `forward` binds y before the launch; forward returns `returns`."""
    return _CANDIDATE.format(stores=stores.replace("\n", "\n    "), forward=forward, returns=returns)


# writes relu into x's own storage and returns x
RELU_INTO_X = candidate("tl.store(x_ptr + offs, tl.maximum(x, 0.0), mask=mask)")
# right values in a new tensor, x left unchanged
RELU_INTO_NEW = candidate("tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)",
                          forward="y = torch.empty_like(x)", returns="y")
# right values in a new tensor, wrong values written into x
RELU_INTO_NEW_ABS_INTO_X = candidate(
    "tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)\ntl.store(x_ptr + offs, tl.abs(x), mask=mask)",
    forward="y = torch.empty_like(x)", returns="y")
INCREMENT_X = candidate("tl.store(x_ptr + offs, x + 1, mask=mask)")

_tags = itertools.count()


@pytest.fixture
def load(tmp_path, monkeypatch):
    """`load(task, code)`: the task at its default size and the candidate, built as the judge does."""
    monkeypatch.chdir(tmp_path)  # the candidate is written to a file (Triton reads kernel source)

    def _load(task: Task, code: str, preset: str | None = None) -> LoadedModels:
        task_module = load_task_module(task, preset)
        path = write_candidate(textwrap.dedent(code), f"inplace_{next(_tags)}")
        module = import_candidate(path)
        reference, model, init = build_models(task_module, module, 0, torch.float32, torch.device("cpu"))
        return LoadedModels(task_module, module, path, reference, model, init)

    return _load


def correctness_failure(task: Task, models: LoadedModels) -> StageFailure | None:
    """The StageFailure of two regular and two wide trials, None when the candidate passes."""
    backend = InterpreterBackend()
    runner = CandidateRunner(models.candidate, backend, models.candidate_file)
    try:
        run_trials(task, models, backend, runner, 2, 0, torch.float32, CorrectnessStats())
    except StageFailure as failure:
        return failure
    return None


def test_in_place_candidate_of_an_in_place_reference_passes(load):
    assert correctness_failure(RELU_INPLACE, load(RELU_INPLACE, RELU_INTO_X)) is None


def test_candidate_that_leaves_the_inputs_of_an_in_place_reference_unchanged_fails(load):
    failure = correctness_failure(RELU_INPLACE, load(RELU_INPLACE, RELU_INTO_NEW))
    assert failure is not None and failure.error_class == "correctness:input-mutation"
    assert "updates its inputs in place" in failure.message and "input 0 differs" in failure.message


def test_candidate_that_updates_the_inputs_wrongly_fails(load):
    failure = correctness_failure(RELU_INPLACE, load(RELU_INPLACE, RELU_INTO_NEW_ABS_INTO_X))
    assert failure is not None and failure.error_class == "correctness:input-mutation"
    assert "input 0 differs" in failure.message


def test_a_reference_that_does_not_mutate_still_forbids_mutating_the_inputs(load):
    failure = correctness_failure(RELU, load(RELU, RELU_INTO_X))
    assert failure is not None and failure.error_class == "correctness:input-mutation"
    assert "write results to a new output tensor" in failure.message
    assert correctness_failure(RELU, load(RELU, RELU_INTO_NEW)) is None


def test_in_place_update_of_an_integer_input_passes(load):
    # the float64 reference gets its own copy of integer inputs too, so its update reaches
    # neither the candidate's inputs nor the comparison
    assert correctness_failure(INCREMENT_INPLACE, load(INCREMENT_INPLACE, INCREMENT_X)) is None


class _TimedCPU(InterpreterBackend):
    """The interpreter with a stand-in clock, so the profile stage's checks run on the CPU."""

    timed = True

    def time_call_ms(self, fn, flush=None) -> float:
        fn()
        return 1.0


def timed_failure(task: Task, models: LoadedModels, monkeypatch, guard=lambda where: None) -> StageFailure | None:
    """The StageFailure of the profile stage (its last timed call's checks), None when it passes."""
    monkeypatch.setattr(profile, "profiled_kernels", lambda *args: [])
    backend = _TimedCPU()
    runner = CandidateRunner(models.candidate, backend, models.candidate_file)
    settings = profile.ProfileSettings(timed_calls=4, warmup_calls=1, seed=0, compile_baseline=False,
                                       coverage_threshold=0.5,
                                       reference_mutates_inputs=task.reference_mutates_inputs)
    try:
        profile.profile_candidate(task, models, backend, runner, settings, torch.float32, {"kernel"}, guard=guard)
    except StageFailure as failure:
        return failure
    return None


def test_the_profile_stage_checks_the_judges_world_before_each_comparison(load, monkeypatch):
    # `guard` is `JudgeWorld.check`: before each verified timed call's comparison, the last one's, and at the end
    models = load(RELU_INPLACE, RELU_INTO_X)
    seen: list[str] = []
    assert timed_failure(RELU_INPLACE, models, monkeypatch, guard=seen.append) is None
    assert seen == ["timing, timed call 1", "timing, timed call 2", "timing, timed call 3", "timing, last timed call",
                    "timing, after its timed calls"]

    def tampered(where: str) -> None:
        raise StageFailure("correctness:tampering", f"{where}, the candidate's code changed `torch.isclose`")

    failure = timed_failure(RELU_INPLACE, models, monkeypatch, guard=tampered)
    assert failure is not None and failure.error_class == "correctness:tampering"


def test_timed_in_place_candidate_returning_its_input_passes(load, monkeypatch):
    # the returned tensor is the input: poisoning it must not destroy the fresh inputs
    assert timed_failure(RELU_INPLACE, load(RELU_INPLACE, RELU_INTO_X), monkeypatch) is None


def test_timed_call_that_skips_the_in_place_update_fails(load, monkeypatch):
    failure = timed_failure(RELU_INPLACE, load(RELU_INPLACE, RELU_INTO_NEW), monkeypatch)
    assert failure is not None and failure.error_class == "correctness:timed-output"
    assert "input 0" in failure.message


def _live_storages(numel: int, besides: dict) -> set[int]:
    """Storages of the live tensors of `numel` elements, other than the tensors in `besides`
    (views of one storage count once)."""
    return {obj.untyped_storage().data_ptr() for obj in _live_tensors(numel) if id(obj) not in besides}


def _live_tensors(numel: int) -> list[torch.Tensor]:
    found = []
    with warnings.catch_warnings():  # isinstance() on every object trips deprecated module attributes
        warnings.simplefilter("ignore", FutureWarning)
        for obj in gc.get_objects():
            try:
                if isinstance(obj, torch.Tensor) and obj.numel() == numel:
                    found.append(obj)
            except ReferenceError:  # a weak proxy whose object is gone (left by another test)
                continue
    return found


# a size no other test uses: the count below is over the whole process
ODD_SIZED_RELU = make_task("relu_2719", "return torch.relu(x)", mutates=False, draw="torch.randn(2719)")


def test_the_same_storage_call_runs_without_the_first_calls_inputs_and_results(load, monkeypatch):
    """At KernelBench sizes (8 GiB inputs) the first call's inputs, the reference's copy and output
    and the float64 copies held beside the second call's own took a whole-device budget past its
    limit: only the candidate's inputs and its previous output may still be alive."""
    from atrl.harness.stages import correctness
    from atrl.harness.stages.provenance import ProvenanceRule

    models = load(ODD_SIZED_RELU, RELU_INTO_NEW)
    before = {id(t): t for t in _live_tensors(2719)}
    alive: list[int] = []
    original = correctness._same_storage_call

    def counting(*args, **kwargs):
        alive.append(len(_live_storages(2719, before)))
        return original(*args, **kwargs)

    monkeypatch.setattr(correctness, "_same_storage_call", counting)
    monkeypatch.setattr(correctness, "FIRST_OUTPUT_COPY_LIMIT", 0)  # no copy at such sizes either
    backend = InterpreterBackend()
    runner = CandidateRunner(models.candidate, backend, models.candidate_file)
    run_trials(ODD_SIZED_RELU, models, backend, runner, 2, 0, torch.float32, CorrectnessStats(),
               rule=ProvenanceRule("partial", 0.5))
    assert alive == [2]  # the candidate's input tensors (rewritten in place next) and its last output


_SEEN_SUMS: list[float] = []  # the input sums a recording candidate saw, call by call

RECORDS_INPUT_SUMS = """
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

SEEN = sys.modules[MODULE]._SEEN_SUMS


@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        SEEN.append(float(x.double().sum()))
        y = torch.empty_like(x)
        kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
""".replace("MODULE", repr(__name__))

# caches its output under a key that a rescaling of the inputs leaves unchanged (where the
# largest element is): every call with another scale gets the cached, stale result
SCALE_BLIND_CACHE = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        key = int(x.argmax())
        if key not in self.cache:
            y = torch.empty_like(x)
            kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
            self.cache[key] = y
        return self.cache[key]
"""


def test_every_timed_call_gets_inputs_of_its_own(load, monkeypatch):
    """A cache keyed by content (a checksum of the inputs) must never hit while timed: with the
    same inputs in every timed call but the last, it timed a lookup instead of the work."""
    _SEEN_SUMS.clear()
    assert timed_failure(RELU, load(RELU, RECORDS_INPUT_SUMS), monkeypatch) is None
    timed = _SEEN_SUMS[-4:]  # 1 warm-up call, then 4 timed ones (the last on a fresh draw)
    assert len(set(timed)) == 4


def test_a_cache_blind_to_the_rescaling_fails_at_a_verified_timed_call(load, monkeypatch):
    failure = timed_failure(RELU, load(RELU, SCALE_BLIND_CACHE), monkeypatch)
    assert failure is not None and failure.error_class == "correctness:timed-output"
    assert "timed call" in failure.message and "cached" in failure.message


def test_an_output_buffer_kept_between_timed_calls_passes(load, monkeypatch):
    reused = candidate("tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)",
                       forward="y = self.__dict__.setdefault('buffer', torch.empty_like(x))", returns="y")
    assert timed_failure(RELU, load(RELU, reused), monkeypatch) is None


def test_a_device_side_cache_keyed_by_signs_fails_the_timed_calls(load, monkeypatch):
    """tests/adversarial/candidates/timed_cache_sign_key_matmul.py: right on every fresh draw, so
    the interpreter (untimed) accepts it; timed, it returned a cached product for rescaled inputs."""
    from pathlib import Path

    from atrl.tasks.registry import get_task

    task = get_task("builtin/matmul")
    cheat = (Path(__file__).parents[1] / "adversarial" / "candidates" / "timed_cache_sign_key_matmul.py").read_text()
    failure = timed_failure(task, load(task, cheat, "small"), monkeypatch)
    assert failure is not None and failure.error_class == "correctness:timed-output"


_BATCHNORM_TASK = Task(id="test/batchnorm", suite="test", name="batchnorm", level=1, source="""
import torch
import torch.nn as nn

ROWS, CHANNELS = 64, 16


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(ROWS, CHANNELS) * 3 + 2]


def get_init_inputs():
    return [CHANNELS]
""")

_BATCHNORM_CANDIDATE = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def batchnorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, rows, channels, eps, BATCH_STATS: tl.constexpr,
                     BLOCK: tl.constexpr):
    c = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < rows
    x = tl.load(x_ptr + offs * channels + c, mask=mask, other=0.0)
    if BATCH_STATS:
        mean = tl.sum(x, axis=0) / rows
        diff = tl.where(mask, x - mean, 0.0)
        var = tl.sum(diff * diff, axis=0) / rows
    else:  # the running statistics of a fresh BatchNorm: mean 0, variance 1
        mean = 0.0
        var = 1.0
    y = (x - mean) / tl.sqrt(var + eps) * tl.load(w_ptr + c) + tl.load(b_ptr + c)
    tl.store(y_ptr + offs * channels + c, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        rows, channels = x.shape
        batchnorm_kernel[(channels,)](x, y, self.bn.weight, self.bn.bias, rows, channels, self.bn.eps,
                                      BATCH_STATS={batch_stats}, BLOCK=triton.next_power_of_2(rows))
        return y
"""


def test_batchnorm_is_judged_in_training_mode_as_kernelbench_runs_it(load):
    """KernelBench calls Model(...) and runs it as constructed, in training mode, so BatchNorm
    normalises with the batch's own statistics: that Triton BatchNorm passes, one that uses the
    running statistics (eval mode) fails."""
    batch_stats = load(_BATCHNORM_TASK, _BATCHNORM_CANDIDATE.format(batch_stats=True))
    assert batch_stats.reference.training
    assert correctness_failure(_BATCHNORM_TASK, batch_stats) is None
    running_stats = load(_BATCHNORM_TASK, _BATCHNORM_CANDIDATE.format(batch_stats=False))
    failure = correctness_failure(_BATCHNORM_TASK, running_stats)
    assert failure is not None and failure.error_class == "correctness:mismatch"
