"""A scalar kernel argument bounds a loop on the interpreter whatever NumPy's version: Triton 3.6
converted it with `int()` of a one-element array, which NumPy 2.5 refuses (2.4 only warns, so the
test turns that warning into the error)."""

from __future__ import annotations

import warnings

import pytest
import torch
import triton
import triton.language as tl

from atrl.backends.interpreter import scalar_arguments_as_loop_bounds

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="runs kernels on the interpreter")


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def test_a_loop_to_a_scalar_argument_runs_where_numpy_refuses_int_of_an_array(monkeypatch):
    from triton.runtime import interpreter

    current = interpreter._patch_lang_tensor

    def as_in_triton_3_6(tensor, scope):
        current(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data))

    monkeypatch.setattr(interpreter, "_patch_lang_tensor", as_in_triton_3_6)
    x, out = torch.arange(10, dtype=torch.float32), torch.zeros(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # NumPy 2.5's behaviour
        with pytest.raises(Exception, match="0-dimensional|scalar"):
            sum_kernel[(1,)](x, out, 10, BLOCK=4)
        scalar_arguments_as_loop_bounds()
        sum_kernel[(1,)](x, out, 10, BLOCK=4)
    assert out.item() == 45.0
