"""The fused comparison kernels give the PyTorch path's verdicts and statistics.

They run on CUDA tensors in the judge; here Triton's interpreter runs them on CPU tensors
(`uses_fused_kernels` forced true), and each result is checked against the PyTorch path on the
same tensors.
"""

from __future__ import annotations

import pytest
import torch

import atrl.harness.stages.compare as compare
from atrl.harness.stages.compare import compare_tensor, error_norms
from atrl.harness.stages.compare_kernels import BLOCK

SIZE = 3 * BLOCK + 17  # several blocks and a partial one
# the interpreter evaluates inf - inf (the kernels' finiteness test) in numpy, which warns
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


def _both(monkeypatch, fn, *args, **kwargs):
    """(PyTorch path's result, fused kernels' result) of fn(*args)."""
    monkeypatch.setattr(compare, "uses_fused_kernels", lambda *tensors: False)
    torch_result = fn(*args, **kwargs)
    monkeypatch.setattr(compare, "uses_fused_kernels", lambda *tensors: True)
    return torch_result, fn(*args, **kwargs)


def _specials(t: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    t = t.clone()
    picks = torch.randint(0, t.numel(), (40,), generator=generator)
    values = torch.tensor([float("nan"), float("inf"), float("-inf"), 0.0, 1e-38, -3e4] * 7)[:40]
    t.view(-1)[picks] = values.to(t.dtype)
    return t


CASES = ["equal", "rounding", "one_wrong_late", "many_wrong", "nan_where_finite", "specials_both", "zero_reference"]


def _pair(case: str, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(CASES.index(case))
    ref = torch.randn(SIZE, generator=g).to(dtype).reshape(SIZE // 1, 1)
    cand = ref.clone()
    if case == "rounding":
        cand = (ref.double() * (1 + 1e-6 * torch.randn(ref.shape, generator=g, dtype=torch.float64))).to(dtype)
    elif case == "one_wrong_late":
        cand.view(-1)[2 * BLOCK + 5] += 1.0  # the first wrong element is in the third block
    elif case == "many_wrong":
        cand = cand + torch.rand(ref.shape, generator=g).to(dtype)
    elif case == "nan_where_finite":
        cand.view(-1)[BLOCK + 3] = float("nan")
    elif case == "specials_both":
        ref = _specials(ref, g)
        cand = ref.clone()
        cand.view(-1)[7] = float("inf")
    elif case == "zero_reference":
        ref = torch.zeros_like(ref)
        cand = ref + 1e-3
    return ref, cand


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("case", CASES)
def test_fused_allclose_gives_the_pytorch_paths_verdict_and_statistics(monkeypatch, case, dtype):
    ref, cand = _pair(case, dtype)
    (torch_failure, torch_errors), (fused_failure, fused_errors) = _both(
        monkeypatch, compare_tensor, ref, cand, 1e-2, 1e-2)
    assert (fused_failure is None) == (torch_failure is None)
    if torch_failure is not None:
        assert (fused_failure.error_class, fused_failure.message) == (torch_failure.error_class, torch_failure.message)
    assert fused_errors == torch_errors


def test_fused_allclose_counts_integer_outputs_like_the_pytorch_path(monkeypatch):
    ref = torch.arange(SIZE, dtype=torch.int32)
    cand = ref.clone()
    cand[BLOCK * 2 + 1] += 3
    (torch_failure, torch_errors), (fused_failure, fused_errors) = _both(monkeypatch, compare_tensor, ref, cand, 0.0, 0.0)
    assert fused_failure.message == torch_failure.message and fused_errors == torch_errors


@pytest.mark.parametrize("case", CASES)
def test_fused_error_norms_equal_the_pytorch_paths_up_to_summation_order(monkeypatch, case):
    ref, cand = _pair(case, torch.float32)
    ref64 = ref.double()
    torch_norms, fused_norms = _both(monkeypatch, error_norms, cand, ref64)
    assert fused_norms.nonzero == torch_norms.nonzero
    for field in ("error", "reference", "cross"):
        fused, plain = getattr(fused_norms, field), getattr(torch_norms, field)
        assert fused == pytest.approx(plain, rel=1e-12, abs=1e-300, nan_ok=True), field


def test_the_fused_path_is_taken_on_cuda_real_tensors_only():
    cpu = torch.zeros(4)
    assert not compare.uses_fused_kernels(cpu, cpu)
    meta = torch.zeros(4, device="meta")
    assert not compare.uses_fused_kernels(meta, meta)
    if torch.cuda.is_available():
        gpu = torch.zeros(compare.FUSED_MIN_ELEMENTS, device="cuda")
        assert compare.uses_fused_kernels(gpu, gpu)
        assert not compare.uses_fused_kernels(gpu[:-1], gpu[:-1])  # small: not worth a compilation
        assert not compare.uses_fused_kernels(gpu.to(torch.complex64), gpu.to(torch.complex64))
        assert not compare.uses_fused_kernels(gpu.bool(), gpu.bool())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("case", CASES)
def test_on_a_gpu_the_fused_comparison_matches_the_pytorch_path(monkeypatch, case):
    from atrl.harness.stages.compare_kernels import allclose_partials, norm_partials

    ref, cand = (t.cuda() for t in _pair(case, torch.float32))
    allclose_partials(ref, cand, 1e-2, 1e-2), norm_partials(cand, ref.double())  # they build and run here
    (torch_failure, torch_errors), (fused_failure, fused_errors) = _both(
        monkeypatch, compare_tensor, ref, cand, 1e-2, 1e-2)
    assert (fused_failure is None) == (torch_failure is None)
    if torch_failure is not None:
        assert fused_failure.message == torch_failure.message
    assert fused_errors == torch_errors
    torch_norms, fused_norms = _both(monkeypatch, error_norms, cand, ref.double())
    assert fused_norms.nonzero == torch_norms.nonzero
    # NaN where the reference is finite makes the relative error NaN on both paths
    assert fused_norms.relative == pytest.approx(torch_norms.relative, rel=1e-9, abs=1e-300, nan_ok=True)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_the_fused_tolerance_is_the_float64_value_not_its_float32_rounding(monkeypatch):
    # float32(1e-4) is 9.99999975e-05: a difference of 9.9999999e-05 is within atol=1e-4 only in
    # float64. Compiled Triton passes a Python float argument as float32 (the interpreter keeps
    # float64, so this can only fail on a GPU)
    ref = torch.zeros(SIZE, dtype=torch.float64, device="cuda")
    cand = torch.full_like(ref, 9.9999999e-05)
    (torch_failure, _), (fused_failure, _) = _both(monkeypatch, compare_tensor, ref, cand, 1e-4, 0.0)
    assert torch_failure is None and fused_failure is None


def test_fused_kernels_that_cannot_be_built_fall_back_to_the_pytorch_path_once_with_a_warning(monkeypatch):
    import atrl.harness.stages.compare_kernels as kernels

    def unbuildable(*args):
        raise RuntimeError("this Triton rejects the kernel")

    monkeypatch.setattr(compare, "_fused_failure", [])
    monkeypatch.setattr(kernels, "allclose_partials", unbuildable)
    monkeypatch.setattr(kernels, "norm_partials", unbuildable)
    ref, cand = _pair("one_wrong_late", torch.float32)
    expected = compare_tensor(ref, cand, 1e-2, 1e-2)  # the PyTorch path (CPU tensors)
    monkeypatch.setattr(compare, "uses_fused_kernels", lambda *tensors: not compare._fused_failure)
    with pytest.warns(UserWarning, match="this Triton rejects the kernel"):
        failure, errors = compare_tensor(ref, cand, 1e-2, 1e-2)
    assert (failure.message, errors) == (expected[0].message, expected[1])
    assert compare._fused_failure == ["RuntimeError: this Triton rejects the kernel"]
    assert error_norms(cand, ref.double()) == error_norms(cand, ref.double())  # no second warning: the PyTorch path


@pytest.mark.parametrize("error", ["CUDA error: an illegal memory access was encountered",
                                   "CUDA out of memory. Tried to allocate 6.00 GiB"])
def test_a_cuda_error_or_out_of_memory_in_the_fused_kernels_is_not_hidden(monkeypatch, error):
    import atrl.harness.stages.compare_kernels as kernels

    def broken_device(*args):
        raise RuntimeError(error)

    monkeypatch.setattr(compare, "_fused_failure", [])
    monkeypatch.setattr(kernels, "allclose_partials", broken_device)
    monkeypatch.setattr(compare, "uses_fused_kernels", lambda *tensors: True)
    ref, cand = _pair("equal", torch.float32)
    with pytest.raises(RuntimeError, match=error.split(":")[0].split(".")[0]):
        compare_tensor(ref, cand, 1e-2, 1e-2)
    assert compare._fused_failure == []
