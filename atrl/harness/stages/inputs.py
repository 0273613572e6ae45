"""Inputs for the correctness trials and the timing: built on the device, cast, copied, widened.

Inputs are created under the device as default device, so full-size GPU inputs are never
materialised on the CPU. Only floating tensors are cast to the task dtype; integer and boolean
tensors keep theirs. A *wide* variant replaces floating inputs with standard-normal draws times
a scale (both signs, larger magnitudes) of the same shapes.
"""

from __future__ import annotations

import types

import torch

Inputs = list  # positional arguments of forward: tensors and plain values


def _to_device(value, device: torch.device, dtype: torch.dtype):
    if isinstance(value, torch.Tensor):
        value = value.to(device)
        return value.to(dtype) if value.is_floating_point() else value
    return value


def input_cases(task_module: types.ModuleType, multi_case: bool, device: torch.device,
                dtype: torch.dtype) -> list[Inputs]:
    """The input cases on `device`: one from `get_inputs()`, or one per group of `get_input_groups()`."""
    with torch.device(device):
        groups = list(task_module.get_input_groups()) if multi_case else [task_module.get_inputs()]
        cases = []
        for group in groups:
            if isinstance(group, dict):
                group = list(group.values())
            cases.append([_to_device(v, device, dtype) for v in group])
    return cases


def copy_inputs(inputs: Inputs) -> Inputs:
    """An independent copy (tensors cloned, layout kept), so each side gets its own inputs."""
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]


def double_inputs(inputs: Inputs) -> Inputs:
    """An independent copy for the float64 reference: floating tensors as float64, other tensors
    cloned (a reference that updates its inputs in place must not touch the originals)."""
    return [
        (v.to(torch.float64, copy=True) if v.is_floating_point() else v.clone()) if isinstance(v, torch.Tensor) else v
        for v in inputs
    ]


def widen_inputs(inputs: Inputs, scale: float, generator: torch.Generator) -> Inputs:
    """Floating tensors replaced by `scale` × standard-normal draws of the same shape and dtype
    (drawn on `generator`'s device, which should be the inputs' device)."""
    wide = []
    for v in inputs:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            draw = torch.randn(v.shape, generator=generator, dtype=torch.float32, device=generator.device)
            wide.append((draw * scale).to(device=v.device, dtype=v.dtype))
        else:
            wide.append(v)
    return wide


def inputs_equal(before: Inputs, after: Inputs) -> bool:
    """True when every tensor of `after` equals (NaN-aware, bitwise) its copy in `before`."""
    for a, b in zip(before, after, strict=True):
        if isinstance(a, torch.Tensor):
            if a.shape != b.shape or a.dtype != b.dtype:
                return False
            if a.is_floating_point() or a.is_complex():
                same = (a == b) | (torch.isnan(a) & torch.isnan(b))
                if not bool(same.all()):
                    return False
            elif not torch.equal(a, b):
                return False
    return True
