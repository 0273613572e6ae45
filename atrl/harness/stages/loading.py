"""Stage 3 (compile): load the task's reference module and the candidate, build both models.

The task source (at a size preset) is executed into a fresh module whose `__file__` is the
task's path, so loaders that read sibling files (NPUKernelBench's `get_input_groups()` JSON)
work. The candidate is written to a real file in the current directory (Triton's JIT reads
kernel source from files) and imported. `Model` and `ModelNew` are constructed from the same
`get_init_inputs()` under the same seed, so identically-built parameters are equal, then cast
to the task dtype and moved to the device.
"""

from __future__ import annotations

import importlib.util
import random
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from atrl.harness.stages.trace import StageFailure, reference_blamed, trim_exception
from atrl.tasks.task import Task

_SIGNATURE_ERROR = re.compile(
    r"(__init__|forward)\(\) (takes|missing|got an unexpected keyword|got multiple values)",
)


@dataclass
class LoadedModels:
    """The reference and candidate modules and models, ready on the device."""

    task_module: types.ModuleType
    candidate_module: types.ModuleType
    candidate_file: str
    reference: nn.Module
    candidate: nn.Module
    init_inputs: list


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (all devices) identically."""
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np
    except ImportError:
        return
    np.random.seed(seed % (2**32))


def torch_dtype(name: str) -> torch.dtype:
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise StageFailure("compile:error", f"the task's dtype {name!r} is not a torch dtype")
    return dtype


def load_task_module(task: Task, preset: str | None) -> types.ModuleType:
    """Execute the task source at `preset` into a fresh module registered in `sys.modules`."""
    name = "atrl_task_" + re.sub(r"\W", "_", task.id)
    module = types.ModuleType(name)
    module.__file__ = task.path or f"<task {task.id}>"
    sys.modules[name] = module
    code = compile(task.source_at(preset), module.__file__, "exec")
    exec(code, module.__dict__)
    return module


def write_candidate(code: str, tag: str) -> str:
    """Write `code` to `candidate_<tag>.py` in the current directory; returns the file's path."""
    path = Path.cwd() / f"candidate_{tag}.py"
    path.write_text(code)
    return str(path)


def import_candidate(path: str) -> types.ModuleType:
    """Import the candidate file at `path` as a fresh module registered in `sys.modules`."""
    name = Path(path).stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def classify_compile_error(exc: BaseException, candidate_file: str | None, kernel_names: set[str]) -> StageFailure:
    """Map an exception of the compile stage to compile:triton / compile:signature / compile:error."""
    trimmed = trim_exception(exc, candidate_file)
    inner = trimmed.exception
    triton_error = type(inner).__module__.startswith("triton") or any(
        type(link).__name__ in ("CompilationError", "InterpreterError") for link in (exc, inner)
    )
    in_kernel = trimmed.function in kernel_names
    if triton_error or in_kernel:
        return StageFailure("compile:triton", trimmed.text(), trimmed.line)
    # Arity errors of ModelNew's own __init__/forward are raised at the harness's call, before
    # any line of the candidate runs.
    if isinstance(inner, TypeError) and _SIGNATURE_ERROR.search(str(inner)) and not trimmed.frames:
        return StageFailure("compile:signature", trimmed.text(), None)
    return StageFailure("compile:error", trimmed.text(), trimmed.line)


def build_models(task_module: types.ModuleType, candidate_module: types.ModuleType, seed: int,
                 dtype: torch.dtype, device: torch.device, preset: str | None = None,
                 ) -> tuple[nn.Module, nn.Module, list]:
    """`Model(*init)` and `ModelNew(*init)` constructed under the same seed, cast and moved. The
    reference failing to build is the task's failure at `preset` (`task:reference-error`)."""
    seed_everything(seed)
    with reference_blamed(preset):
        init_inputs = list(task_module.get_init_inputs())
        seed_everything(seed)
        reference = task_module.Model(*init_inputs)
    model_new = getattr(candidate_module, "ModelNew", None)
    if model_new is None:
        raise StageFailure("compile:error", "the candidate defines no ModelNew")
    seed_everything(seed)
    candidate = model_new(*init_inputs)
    if not isinstance(candidate, nn.Module):
        raise StageFailure("compile:error", "ModelNew(...) is not a torch.nn.Module")
    # Module.to(dtype) casts floating parameters and buffers only; integer buffers keep theirs.
    # Both stay in the mode their constructors left (training), as KernelBench runs them: BatchNorm
    # normalises with the batch's statistics there, and its tasks' dropouts have p = 0.
    reference = reference.to(device=device, dtype=dtype)
    candidate = candidate.to(device=device, dtype=dtype)
    return reference, candidate, init_inputs
