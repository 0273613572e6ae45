"""libdevice calls on Triton's interpreter: run with NumPy, judged by what they compute."""

from __future__ import annotations

import numpy as np
from test_judge import interpreter_options, judge_in_child, relu_candidate

from atrl.backends.interpreter_libdevice import numpy_function
from atrl.tasks.registry import get_task


def test_symbols_map_to_the_numpy_function_of_the_same_meaning():
    assert numpy_function("__nv_tanhf") is np.tanh and numpy_function("__nv_tanh") is np.tanh
    assert numpy_function("__nv_fast_expf") is np.exp and numpy_function("__nv_powf") is np.power
    assert float(numpy_function("__nv_erff")(np.float32(0.5))) == np.float32(0.5204998778130465)
    assert numpy_function("__nv_fmaf")(2.0, 3.0, 1.0) == 7.0
    assert abs(float(numpy_function("__nv_lgammaf")(np.float32(4.0))) - np.log(6.0)) < 1e-6
    assert numpy_function("__nv_j0f") is None  # a Bessel function: not in the table


def test_libdevice_kernels_are_judged_by_what_they_compute_on_the_interpreter():
    tanh = get_task("builtin/tanh")
    gelu = get_task("builtin/gelu_tanh")
    imports = "from triton.language.extra import libdevice\n\n\n"
    jobs = {
        # the backend-neutral module and the CUDA one reached through tl, as GPU answers write them
        "generic_tanh": (tanh, relu_candidate("y = libdevice.tanh(x)", extra=imports)),
        "cuda_tanh": (tanh, relu_candidate("y = tl.extra.cuda.libdevice.tanh(x)")),
        "two_args_gelu": (gelu, relu_candidate(
            "y = 0.5 * x * (1.0 + libdevice.tanh(0.7978845608028654 * (x + 0.044715 * libdevice.pow(x, 3.0))))",
            extra=imports)),
        "wrong_function": (tanh, relu_candidate("y = libdevice.sinh(x)", extra=imports)),
        "not_in_table": (tanh, relu_candidate("y = libdevice.j0(x)", extra=imports)),
    }
    got = judge_in_child([{"name": name, "task": task, "code": code, "options": interpreter_options()}
                          for name, (task, code) in jobs.items()])
    for name in ("generic_tanh", "cuda_tanh", "two_args_gelu"):
        assert got[name]["ok"], got[name]
    assert got["wrong_function"]["error_class"] == "correctness:mismatch", got["wrong_function"]
    assert got["not_in_table"]["error_class"] == "compile:triton", got["not_in_table"]
    assert "j0" in got["not_in_table"]["message"] and "interpreter" in got["not_in_table"]["message"]
