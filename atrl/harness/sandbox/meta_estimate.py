"""Measure a task's footprint (`atrl.harness.sandbox.footprint`) on PyTorch's `meta` device.

Inputs, models and the reference forward (at the task dtype and in float64) are built on `meta`,
which records shapes and dtypes without allocating; `LiveBytes` follows the bytes the forward
allocates to find its temporaries. This executes the task's source: it runs in a worker.
"""

from __future__ import annotations

import copy
import types
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from atrl.harness.sandbox.footprint import Footprint, empty_footprint

META = torch.device("meta")


def _tensor_bytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _float64_bytes(t: torch.Tensor) -> int:
    return t.numel() * 8 if t.is_floating_point() else _tensor_bytes(t)


def _tensors(value) -> list[torch.Tensor]:
    return [leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor)]


class LiveBytes(TorchDispatchMode):
    """Peak bytes of the tensors that ops allocate while the mode is active (views and in-place
    results, whose schema says they alias an argument, allocate nothing). A tensor counts until
    its Python object is freed."""

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0

    def _free(self, nbytes: int) -> None:
        self.live -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if any(r.alias_info is not None for r in func._schema.returns):
            return out
        for tensor in _tensors(out):
            nbytes = _tensor_bytes(tensor)
            self.live += nbytes
            weakref.finalize(tensor, self._free, nbytes)
        self.peak = max(self.peak, self.live)
        return out


def _forward_on_meta(model: torch.nn.Module, inputs: list) -> tuple[int, int, int]:
    """(output bytes, temporaries beyond the output, elements of the largest output tensor) of
    `model(*inputs)` on meta tensors."""
    tracker = LiveBytes()
    with torch.no_grad(), tracker:
        output = model(*inputs)
    output_bytes = sum(_tensor_bytes(t) for t in _tensors(output))
    largest = max((t.numel() for t in _tensors(output)), default=0)
    return output_bytes, max(0, tracker.peak - output_bytes), largest


def _model_bytes(model: torch.nn.Module) -> tuple[int, int]:
    tensors = [*model.parameters(), *model.buffers()]
    return sum(_tensor_bytes(t) for t in tensors), sum(_float64_bytes(t) for t in tensors)


def estimate_module(task_module: types.ModuleType, multi_case: bool, dtype: torch.dtype,
                    timed: bool) -> Footprint:
    """The footprint of a loaded task module at `dtype` (module docstring)."""
    from atrl.harness.stages.inputs import double_inputs, input_cases

    if not hasattr(task_module, "get_input_groups" if multi_case else "get_inputs"):
        return empty_footprint(timed)
    try:
        cases = input_cases(task_module, multi_case, META, dtype)
    except Exception as exc:  # noqa: BLE001 - any failure means: not measurable on meta
        return empty_footprint(timed, "unknown",
                               f"get_inputs() fails on the meta device: {type(exc).__name__}: {exc}"[:300])
    sizes = [sum(_tensor_bytes(t) for t in _tensors(case)) for case in cases]
    sizes64 = [sum(_float64_bytes(t) for t in _tensors(case)) for case in cases]
    largest = max((t.numel() for case in cases for t in _tensors(case)), default=0)
    inputs, inputs_all, inputs64 = max(sizes, default=0), sum(sizes), max(sizes64, default=0)
    try:
        with META:
            init = list(task_module.get_init_inputs())
            model = task_module.Model(*init)
        model = model.to(device=META, dtype=dtype)
        parameters, parameters64 = _model_bytes(model)
        model64 = copy.deepcopy(model).double()  # meta tensors: the copy allocates nothing
        outputs = outputs64 = temporaries = temporaries64 = output_elements = 0
        for case in cases:
            out_bytes, temp, elements = _forward_on_meta(model, case)
            out64_bytes, temp64, _ = _forward_on_meta(model64, double_inputs(case))
            output_elements = max(output_elements, elements)
            outputs, temporaries = max(outputs, out_bytes), max(temporaries, temp)
            outputs64, temporaries64 = max(outputs64, out64_bytes), max(temporaries64, temp64)
    except Exception as exc:  # noqa: BLE001 - the conservative rule of the module docstring
        return Footprint(inputs, inputs_all, inputs64, inputs, inputs64, inputs, inputs64, 0, 0, largest, timed,
                         "meta-inputs", f"the reference does not run on meta: {type(exc).__name__}: {exc}"[:300])
    return Footprint(inputs, inputs_all, inputs64, outputs, outputs64, temporaries, temporaries64,
                     parameters, parameters64, largest, timed, "meta", output_elements=output_elements)


def estimate_task(task, preset: str | None, timed: bool) -> Footprint:
    """Load `task` at `preset` (this executes the task's source: call it in a worker) and
    estimate its footprint."""
    from atrl.harness.stages.loading import load_task_module, torch_dtype

    try:
        module = load_task_module(task, preset)
    except Exception as exc:  # noqa: BLE001 - the judge reports the broken task itself
        return empty_footprint(timed, "unknown",
                               f"the task's module failed to load: {type(exc).__name__}: {exc}"[:300])
    return estimate_module(module, task.multi_case, torch_dtype(task.dtype), timed)
