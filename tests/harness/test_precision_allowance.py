"""The float64 precision bound and long reductions (`accumulation_allowance`): a faithful fp32 sum
of 2^28 terms in another order passes, precision downgrades still fail."""

from __future__ import annotations

import torch

from atrl.harness.stages.compare import accumulation_allowance, check_precision, compare_outputs

MSE_TERMS = 1 << 28  # builtin mse_loss on CUDA: two inputs of 2^28 elements, a 0-d output


def scalar(value: float, dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor(value, dtype=dtype)


def test_a_scalar_reduction_of_2_28_terms_may_err_like_fp32_atomics():
    # measured on an H200: atomics of 1024-element partial sums, relative error 1.02e-5
    ref, ref64, cand = scalar(2.0, torch.float32), scalar(2.0, torch.float64), scalar(2.0 * (1 + 2e-5), torch.float32)
    failure, err = check_precision(ref, cand, ref64, 1e-5, input_elements=MSE_TERMS)
    assert failure is None and err > 1e-5
    failure, _ = check_precision(ref, cand, ref64, 1e-5)  # nothing reduced: the fixed bound
    assert failure is not None and failure.error_class == "correctness:precision"


def test_an_fp16_sized_error_still_fails_after_the_longest_reduction():
    ref, ref64 = scalar(2.0, torch.float32), scalar(2.0, torch.float64)
    cand = scalar(2.0 * (1 + 1e-3), torch.float32)
    failure, _ = check_precision(ref, cand, ref64, 1e-5, input_elements=MSE_TERMS)
    assert failure is not None and failure.error_class == "correctness:precision"


def test_elementwise_and_short_reductions_keep_the_fixed_bound():
    assert accumulation_allowance(torch.float32, 4096 * 4096, 4096 * 4096) == 0.0  # elementwise, square matmul
    assert accumulation_allowance(torch.float32, 4096 * 4096, 4096) < 1e-6  # a row sum of 4096
    assert accumulation_allowance(torch.float32, 1 << 18, 1) < 1e-5
    assert accumulation_allowance(torch.int64, 1 << 28, 1) == 0.0


def test_an_fp16_computed_elementwise_output_fails_whatever_the_input_size():
    torch.manual_seed(0)
    x = torch.randn(1 << 16)
    ref64 = x.double().sigmoid()
    ref, cand = x.sigmoid(), x.half().sigmoid().float()
    failure, _ = compare_outputs(ref, cand, ref64, 1e-2, 1e-2, 1e-5, input_elements=x.numel())
    assert failure is not None and failure.error_class == "correctness:precision"
