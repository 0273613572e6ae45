"""Host code written from Triton's tutorials asks the driver for the device: on the interpreter a
stand-in answers, so the file imports and its kernels are judged."""

from __future__ import annotations

from test_judge import interpreter_options, judge_in_child, relu_candidate

from atrl.tasks.registry import get_task

TUTORIAL_HEADER = """import triton
from triton.runtime import driver

DEVICE = triton.runtime.driver.active.get_active_torch_device()
NUM_SM = driver.active.utils.get_device_properties(DEVICE.index)["multiprocessor_count"]
IS_CUDA = triton.runtime.driver.active.get_current_target().backend == "cuda"


"""


def test_tutorial_style_host_code_imports_and_its_kernels_are_judged():
    relu = get_task("builtin/relu")
    forward = """
        assert x.device == DEVICE and IS_CUDA and NUM_SM > 0
        y = torch.empty(x.shape, device=DEVICE, dtype=x.dtype)
        relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
    """
    right = relu_candidate("y = tl.maximum(x, 0.0)", forward, extra=TUTORIAL_HEADER)
    wrong = relu_candidate("y = tl.maximum(x, 0.0) + 1.0", forward, extra=TUTORIAL_HEADER)
    got = judge_in_child([{"name": name, "task": relu, "code": code, "options": interpreter_options()}
                          for name, code in (("right", right), ("wrong", wrong))])
    assert got["right"]["ok"], got["right"]
    assert got["wrong"]["error_class"] == "correctness:mismatch", got["wrong"]
