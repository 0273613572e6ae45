"""Code written for a GPU, judged on the interpreter: the CPU tensors stand in for CUDA tensors.

KernelBench answers are written for CUDA: `assert x.is_cuda` (KernelBench's own Triton example
asserts it), `torch.empty(..., device="cuda")`, `.cuda()`, `.to("cuda")`, `nn.Module.cuda()`.
On the interpreter the judged tensors live on the CPU, so such a line would fail before any kernel
ran and the verdict would say nothing about the kernel. Inside the judge, `CudaOnCpu` makes those
idioms mean what they mean on a GPU whose tensors are the CPU's: `.cuda()` of a tensor returns it
(on a GPU the judged tensors are already there), a CUDA device in `device=` or `.to(...)` is the
CPU, and `is_cuda` is true. On a torch without CUDA, where these calls can only fail,
`torch.cuda.is_available()` is true for the candidate's own code, `torch.cuda.synchronize()` waits for nothing (CPU work is synchronous), `torch.cuda.current_device()`
is 0 of `torch.cuda.device_count()` 1, `with torch.cuda.device(...)` selects nothing, and `torch.cuda.get_device_properties(...)` describes an H100-class GPU (its SM count sizes
persistent grids). Nothing else changes: no kernel, no PyTorch op and no check of the judge sees a
different tensor. What it does not map (other `torch.cuda.*` calls, `x.device.type == "cuda"`)
still fails, with a hint (`atrl.harness.stages.judge.CPU_DEVICE_HINT`).
"""

from __future__ import annotations

import contextlib
import sys
import sysconfig
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

_IS_CUDA = torch.Tensor.is_cuda.__get__  # compared with ==: each access makes a new method-wrapper


def _is_cuda_device(value: Any) -> bool:
    if isinstance(value, torch.device):
        return value.type == "cuda"
    return isinstance(value, str) and (value == "cuda" or value.startswith("cuda:"))


def _on_cpu(value: Any) -> Any:
    return torch.device("cpu") if _is_cuda_device(value) else value


# The GPU the interpreter stands in for, an H100-class one (SXM), as Triton's driver describes it
# (`utils.get_device_properties`; also atrl.backends.interpreter_driver) ...
STAND_IN_GPU = {"multiprocessor_count": 132, "max_shared_mem": 232448, "max_num_regs": 65536, "warpSize": 32,
                "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120}
STAND_IN_CAPABILITY = (9, 0)
# ... and as torch.cuda.get_device_properties does
GPU_PROPERTIES = SimpleNamespace(name="CPU standing in for a CUDA GPU", major=STAND_IN_CAPABILITY[0],
                                 minor=STAND_IN_CAPABILITY[1],
                                 multi_processor_count=STAND_IN_GPU["multiprocessor_count"], total_memory=80 * 2**30,
                                 warp_size=STAND_IN_GPU["warpSize"], max_threads_per_multi_processor=2048,
                                 shared_memory_per_block_optin=STAND_IN_GPU["max_shared_mem"], L2_cache_size=50 * 2**20)
# resolved, as the caller's file is (a virtual environment's lib64 may be a link to lib)
_LIBRARY_ROOTS = tuple(dict.fromkeys(
    [str(Path(sysconfig.get_paths()[key]).resolve()) for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    + [str(Path(__file__).resolve().parents[1])]))  # the atrl package: the judge's own calls


def _is_available() -> bool:
    """`torch.cuda.is_available()`: true for the candidate's code (`if not torch.cuda.is_available():
    raise ...` guards a GPU answer), false for the judge's and the libraries' own calls, which must
    not try CUDA functions this torch lacks."""
    caller = str(Path(sys._getframe(1).f_code.co_filename).resolve())
    return not caller.startswith(_LIBRARY_ROOTS)


_CUDA_CALLS = {"synchronize": lambda device=None: None, "current_device": lambda: 0, "is_available": _is_available,
               "get_device_properties": lambda device=None: GPU_PROPERTIES, "device_count": lambda: 1,
               # `with torch.cuda.device(x.device):` around a launch (Triton's tutorials): one device, nothing to select
               "device": lambda device=None: contextlib.nullcontext()}


class CudaOnCpu(TorchFunctionMode):
    """Map the CUDA device to the CPU for the code run inside it (see the module doc)."""

    def __enter__(self):
        self._saved = {}
        if not torch.cuda.is_available():  # only where these calls could not succeed anyway
            for name, stand_in in _CUDA_CALLS.items():
                self._saved[name] = getattr(torch.cuda, name)
                setattr(torch.cuda, name, stand_in)
        return super().__enter__()

    def __exit__(self, *exc):
        for name, original in self._saved.items():
            setattr(torch.cuda, name, original)
        return super().__exit__(*exc)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.cuda:
            return args[0]
        if func == _IS_CUDA:
            return True
        if "device" in kwargs:
            kwargs = {**kwargs, "device": _on_cpu(kwargs["device"])}
        if func is torch.Tensor.to:
            args = tuple(_on_cpu(a) for a in args)
        return func(*args, **kwargs)
