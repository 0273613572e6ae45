"""Code written for a GPU, judged on the interpreter: the CPU tensors stand in for CUDA tensors.

KernelBench answers are written for CUDA: `assert x.is_cuda` (KernelBench's own Triton example
asserts it), `torch.empty(..., device="cuda")`, `.cuda()`, `.to("cuda")`, `nn.Module.cuda()`.
On the interpreter the judged tensors live on the CPU, so such a line would fail before any kernel
ran and the verdict would say nothing about the kernel. Inside the judge, `CudaOnCpu` makes those
idioms mean what they mean on a GPU whose tensors are the CPU's: `.cuda()` of a tensor returns it
(on a GPU the judged tensors are already there), a CUDA device in `device=` or `.to(...)` is the
CPU, and `is_cuda` is true. Nothing else changes: no kernel, no PyTorch op and no check of the
judge sees a different tensor. What it does not map (`torch.cuda.*` calls, `x.device.type ==
"cuda"`) still fails, with a hint (`atrl.harness.stages.judge.CPU_DEVICE_HINT`).
"""

from __future__ import annotations

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


class CudaOnCpu(TorchFunctionMode):
    """Map the CUDA device to the CPU for the code run inside it (see the module doc)."""

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
