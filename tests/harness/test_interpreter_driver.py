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


def test_a_compiled_ahead_launch_and_a_cuda_guard_run_as_on_a_gpu():
    """Triton's fused-softmax tutorial compiles with `warmup`, reads `n_regs` and
    `metadata.shared` to size its grid and launches the compiled kernel with every parameter
    positional; GPU answers guard with `torch.cuda.is_available()`. Both run on the interpreter,
    and the compiled handle launches the candidate's own kernel (a wrong one is caught)."""
    relu = get_task("builtin/relu")
    forward = """
        if not torch.cuda.is_available():
            raise RuntimeError("CUDA is required")
        y = torch.empty_like(x)
        n = x.numel()
        kernel = relu_kernel.warmup(x, y, n, BLOCK=1024, num_warps=4, grid=(1,))
        kernel._init_handles()
        occupancy = 65536 // (kernel.n_regs * 32 * 4) if kernel.n_regs > 0 else 8
        if kernel.metadata.shared > 0:
            occupancy = min(occupancy, 232448 // kernel.metadata.shared)
        assert occupancy >= 1
        kernel[(triton.cdiv(n, 1024), 1, 1)](x, y, n, 1024)
        return y
    """
    right = relu_candidate("y = tl.maximum(x, 0.0)", forward)
    wrong = relu_candidate("y = tl.maximum(x, 0.0) + 1.0", forward)
    got = judge_in_child([{"name": name, "task": relu, "code": code, "options": interpreter_options()}
                          for name, code in (("right", right), ("wrong", wrong))])
    assert got["right"]["ok"], got["right"]
    assert got["wrong"]["error_class"] == "correctness:mismatch", got["wrong"]
