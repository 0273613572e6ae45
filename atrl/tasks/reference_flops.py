"""FLOPs of a KernelBench-format reference forward, measured on PyTorch's `meta` device (no
memory, no arithmetic), for the `small` preset's work bound (`atrl.tasks.kernelbench`). Measuring
imports torch and, through meta kernels, its compiler stack: seconds at every suite load, so
results are kept per process and on disk (`flops_cache_dir`)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import io
import json
import os
import sys
import types
import warnings
from pathlib import Path

from atrl.jsonio import write_atomic

# Bump when `forward_flops` changes what it measures: it names the files of the on-disk FLOP cache.
FLOPS_CACHE_VERSION = 1


def flops_cache_dir() -> Path:
    """Where measured FLOPs are kept between processes: `$ATRL_FLOPS_CACHE_DIR`, else
    `~/.cache/atrl/flops`."""
    env = os.environ.get("ATRL_FLOPS_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "atrl" / "flops"


@functools.cache
def _torch_version() -> str | None:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def _flops_cache_file(source: str, values: tuple[tuple[str, int], ...]) -> Path | None:
    """The file of one measurement: named by the source, the values, the torch version and
    `FLOPS_CACHE_VERSION`. None without an installed torch."""
    torch_version = _torch_version()
    if torch_version is None:
        return None
    key = json.dumps([FLOPS_CACHE_VERSION, torch_version, source, values])
    return flops_cache_dir() / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


def _measure_flops(source: str, values: tuple[tuple[str, int], ...]) -> int | None:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from atrl.tasks.resize import substitute_constants

    name = f"atrl_flops_{abs(hash((source, values))):x}"
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    default_dtype = torch.get_default_dtype()
    sink = io.StringIO()
    try:
        code = compile(substitute_constants(source, dict(values)), module.__file__, "exec")
        sys.modules[name] = module
        with (torch.random.fork_rng(devices=[]), warnings.catch_warnings(), contextlib.redirect_stdout(sink),
              contextlib.redirect_stderr(sink), torch.device("meta"), torch.no_grad()):
            warnings.simplefilter("ignore")
            exec(code, module.__dict__)
            # the constructor's default (training) mode, as the harness judges the model
            model = module.Model(*module.get_init_inputs())
            inputs = module.get_inputs()
            if isinstance(inputs, dict):
                inputs = list(inputs.values())
            with FlopCounterMode(display=False) as counter:
                model(*inputs)
        return int(counter.get_total_flops())
    except (Exception, SystemExit):  # noqa: BLE001 - any failure means: not measurable on meta
        return None
    finally:
        sys.modules.pop(name, None)
        if torch.get_default_dtype() != default_dtype:
            torch.set_default_dtype(default_dtype)


@functools.lru_cache(maxsize=4096)
def _cached_flops(source: str, values: tuple[tuple[str, int], ...]) -> int | None:
    path = _flops_cache_file(source, values)
    if path is not None:
        try:
            stored = json.loads(path.read_text())["flops"]
            if stored is None or (isinstance(stored, int) and not isinstance(stored, bool)):
                return stored
        except (OSError, ValueError, KeyError, TypeError):
            pass  # missing or unreadable: measure again
    flops = _measure_flops(source, values)
    if path is not None:
        with contextlib.suppress(OSError):  # a read-only or full disk: the next process measures again
            write_atomic(path, json.dumps({"flops": flops}))
    return flops


def forward_flops(source: str, values: dict[str, int] | None = None) -> int | None:
    """FLOPs (as `torch.utils.flop_counter.FlopCounterMode` counts them: matrix products,
    convolutions, attention) of one reference forward `Model(*get_init_inputs())(*get_inputs())`,
    with `values` substituted for the source's constants. The source is executed with the model
    and inputs built on the `meta` device (no memory, no arithmetic) and the model in its default
    (training) mode. None when that fails (an op without a meta kernel, `.item()` on an input, a
    missing import, ...).

    Measuring imports torch (and its compiler stack, which meta kernels load): seconds at every
    suite load. Results are therefore kept per process and on disk (`flops_cache_dir`, one small
    JSON file per source and values, keyed also by the torch version), so a warm load imports no
    torch."""
    return _cached_flops(source, tuple(sorted((values or {}).items())))
