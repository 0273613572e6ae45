"""The `ascend` backend: Triton-Ascend, in workers of its own environment (`atrl setup ascend`).

Two modes, chosen where the backend is resolved:
- "lowering" (no NPU, the CPU machines we have): `TRITON_INTERPRET=1`; every kernel launch is
  lowered by triton-ascend's real compiler to the linalg stage for an Ascend 910B target and then
  run by triton-ascend's interpreter (`atrl.backends.ascend_lowering`); lowering errors are
  `compile:lowering` verdicts; correctness only, at the `small` preset; nothing is timed and the
  verdict says so (`verdict_notes`).
- "npu" (torch_npu installed in the environment, CANN set up, an NPU device present): the whole
  cascade on the NPU, timed with `torch.npu.Event`s around the whole forward (not per kernel:
  triton-ascend's `do_bench_npu` mis-times callables that launch several kernels), the cache
  flushed before each timed call as on CUDA. Written against torch_npu's documented API
  (`torch.npu.Event(enable_timing=True)`, `record`, `synchronize`, `elapsed_time`,
  `torch.npu.synchronize`, `torch.npu.get_device_name`); not yet run on hardware.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from atrl.backends import ascend_env
from atrl.backends.base import Backend

if TYPE_CHECKING:
    import torch

MODES = ("lowering", "npu")
# CANN's set_env.sh exports these; workers need them to find the toolkit and the device.
CANN_VARIABLES = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH",
                  "ASCEND_RT_VISIBLE_DEVICES", "ASCEND_CUSTOM_OPP_PATH", "ASCEND_CACHE_PATH")
NPU_DEVICE_FILES = ("/dev/davinci0", "/dev/davinci_manager")
L2_FLUSH_BYTES = 256 * 1024 * 1024  # above the 192 MB L2 of Atlas A2


def autotune_with_cpu_benchmarker() -> None:
    """triton-ascend's `Autotuner.__init__` asks the active driver for a benchmarker when none is
    given, at decoration time, and the interpreter has no driver ("0 active drivers"): a correct
    `@triton.autotune` kernel would fail to import. Hand every new Autotuner the interpreter
    backend's host-clock benchmarker instead. Idempotent."""
    import functools

    from triton.runtime.autotuner import Autotuner

    from atrl.backends.interpreter import cpu_bench

    original = Autotuner.__init__
    if getattr(original, "_atrl_cpu", False):
        return

    @functools.wraps(original)
    def init(self, *args, **kwargs):
        if kwargs.get("do_bench") is None:
            kwargs["do_bench"] = cpu_bench
        original(self, *args, **kwargs)

    init._atrl_cpu = True  # type: ignore[attr-defined]
    Autotuner.__init__ = init


def detect_mode(root: Path | None = None, environ: dict[str, str] | None = None) -> str:
    """"npu" when CANN is set up (`ASCEND_HOME_PATH`), an NPU device file exists and torch_npu is
    installed in the environment; else "lowering". Cheap: nothing is imported."""
    environ = dict(os.environ) if environ is None else environ
    root = root or ascend_env.env_dir()
    cann = bool(environ.get("ASCEND_HOME_PATH"))
    device = any(Path(f).exists() for f in NPU_DEVICE_FILES)
    torch_npu = any(root.glob("lib/python3*/site-packages/torch_npu"))
    return "npu" if cann and device and torch_npu else "lowering"


class AscendBackend(Backend):
    name = "ascend"
    platform = "ascend"

    def __init__(self, mode: str | None = None) -> None:
        self.env = ascend_env.require_env() if not ascend_env.inside_env() else None
        self.mode = mode or os.environ.get("ATRL_ASCEND_MODE") or detect_mode()
        if self.mode not in MODES:
            raise ValueError(f"unknown ascend mode {self.mode!r}; expected one of {MODES}")
        self.timed = self.mode == "npu"
        self.default_preset = None if self.timed else "small"
        # triton-ascend 3.2's interpreter runs some reductions far slower than stock Triton's
        # (the builtin argmax_dim solution: about 50-90 s against under 1 s; docs/ascend.md).
        self.stage_time_scale = 1.0 if self.timed else 3.0
        self._flush_buffer: torch.Tensor | None = None

    @property
    def label(self) -> str:
        """"ascend:lowering" or "ascend:npu": reports say which mode judged a run."""
        return f"{self.name}:{self.mode}"

    @property
    def device(self) -> torch.device:
        import torch

        return torch.device("npu", 0) if self.mode == "npu" else torch.device("cpu")

    def worker_python(self) -> str:
        return str(ascend_env.env_python())

    def worker_env(self) -> dict[str, str]:
        env = {"ATRL_ASCEND_MODE": self.mode, ascend_env.ENV_VARIABLE: str(ascend_env.env_dir()),
               "PYTHONPATH": str(ascend_env.project_link())}  # this checkout's harness, never stock Triton
        if self.mode == "npu":
            env["TRITON_INTERPRET"] = "0"
            env.update({k: os.environ[k] for k in CANN_VARIABLES if k in os.environ})
        else:
            env["TRITON_INTERPRET"] = "1"
        return env

    def device_name(self) -> str:
        if self.mode == "npu" and ascend_env.inside_env():
            import torch
            import torch_npu  # noqa: F401 - registers torch.npu

            return str(torch.npu.get_device_name(0))
        if self.mode == "npu":
            return "Ascend NPU (torch_npu)"
        from atrl.backends.ascend_lowering import TARGET_ARCH

        return f"cpu ({platform.machine() or 'unknown'}, triton-ascend lowering for {TARGET_ARCH} + interpreter)"

    def versions(self) -> dict[str, str]:
        """In a worker: the libraries imported; in the caller (stock Triton): the environment's
        versions recorded by `atrl setup ascend`."""
        if not ascend_env.inside_env():
            recorded = self.env.versions if self.env else {}
            found = {k: recorded[k] for k in ("torch", "triton", "triton-ascend", "python") if k in recorded}
        else:
            from importlib.metadata import version

            found = super().versions()
            found["triton-ascend"] = version("triton-ascend")
        found["ascend_mode"] = self.mode
        return found

    def prepare_worker(self) -> None:
        if self.mode == "npu":
            import torch_npu  # noqa: F401 - registers the npu device with torch

            return
        from atrl.backends.ascend_lowering import REPORT, install

        install()
        REPORT.reached.clear()  # prepare_worker runs before each job: the notes are this job's
        autotune_with_cpu_benchmarker()

    def synchronize(self) -> None:
        if self.mode == "npu":
            import torch

            torch.npu.synchronize()

    def verdict_notes(self) -> list[str]:
        if self.mode == "npu":
            return ["ascend: compiled and timed on the NPU"]
        from atrl.backends.ascend_lowering import REPORT

        return [f"ascend: {REPORT.summary()}; no NPU binary: CANN absent; interpreter correctness; not timed"]

    def flush_cache(self) -> None:
        import torch

        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=self.device)
        self._flush_buffer.zero_()

    def time_call_ms(self, fn: Callable[[], object], flush: Callable[[], None] | None = None) -> float:
        """Milliseconds between NPU events recorded just before and after `fn()` (the whole forward);
        `flush` (default: `flush_cache`) runs before the start event."""
        if self.mode != "npu":
            return super().time_call_ms(fn, flush)
        import torch

        (flush or self.flush_cache)()
        start = torch.npu.Event(enable_timing=True)
        end = torch.npu.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end))
