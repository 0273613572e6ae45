"""Backends: resolution by name, their environment, and the device operations the judge uses."""

from __future__ import annotations

import pytest
import torch

from atrl.backends import resolve_backend
from atrl.errors import UsageError


def test_auto_picks_the_interpreter_without_a_gpu_and_cuda_with_one() -> None:
    backend = resolve_backend("auto")
    assert backend.name == ("cuda" if torch.cuda.is_available() else "interpreter")


def test_interpreter_backend_is_untimed_small_and_sets_triton_interpret() -> None:
    backend = resolve_backend("interpreter")
    assert (backend.name, backend.platform, backend.timed, backend.default_preset) == (
        "interpreter", "interpreter", False, "small")
    assert backend.worker_env() == {"TRITON_INTERPRET": "1"}
    assert backend.device == torch.device("cpu")
    assert "interpreter" in backend.device_name()
    assert {"torch", "triton", "python"} <= set(backend.versions())


def test_unknown_backend_is_a_usage_error_naming_the_choices() -> None:
    with pytest.raises(UsageError, match="unknown backend 'tpu'.*interpreter"):
        resolve_backend("tpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_cuda_without_a_gpu_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no CUDA GPU is visible"):
        resolve_backend("cuda")


def test_untimed_backend_refuses_to_time() -> None:
    with pytest.raises(RuntimeError, match="not timed"):
        resolve_backend("interpreter").time_call_ms(lambda: None)


@pytest.mark.gpu
def test_cuda_backend_times_a_call_and_disables_triton_interpret() -> None:
    backend = resolve_backend("cuda")
    assert (backend.platform, backend.timed, backend.default_preset) == ("cuda", True, None)
    assert backend.worker_env() == {"TRITON_INTERPRET": "0", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    x = torch.randn(1 << 24, device=backend.device)
    ms = backend.time_call_ms(lambda: x.mul_(1.0))
    assert ms > 0
    assert {"cuda", "torch", "triton"} <= set(backend.versions())
    assert "H" in backend.device_name() or backend.device_name()


@pytest.mark.gpu
def test_cuda_poisoned_allocator_hands_out_nan_memory() -> None:
    backend = resolve_backend("cuda")
    backend.poison_allocator([1 << 22])
    reused = torch.empty(1 << 20, dtype=torch.float32, device=backend.device)
    assert bool(torch.isnan(reused).any())


def test_auto_without_gpu_device_files_on_linux_never_asks_torch(monkeypatch, tmp_path) -> None:
    import atrl.backends as backends

    def must_not_be_called() -> bool:
        raise AssertionError("torch.cuda.is_available was called")

    monkeypatch.setattr(backends.sys, "platform", "linux")
    monkeypatch.setattr(backends, "GPU_DEVICE_FILES", (str(tmp_path / "nvidiactl"),))
    monkeypatch.setattr(torch.cuda, "is_available", must_not_be_called)
    assert resolve_backend("auto").name == "interpreter"


def test_auto_with_a_gpu_device_file_asks_torch(monkeypatch, tmp_path) -> None:
    import atrl.backends as backends

    device_file = tmp_path / "nvidiactl"
    device_file.touch()
    monkeypatch.setattr(backends.sys, "platform", "linux")
    monkeypatch.setattr(backends, "GPU_DEVICE_FILES", (str(device_file),))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_backend("auto").name == "interpreter"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_backend("auto").name == "cuda"


def test_the_timed_backend_names_agree_with_the_backends_own_flag():
    from atrl.backends import TIMED_BACKENDS
    from atrl.backends.cuda import CudaBackend
    from atrl.backends.interpreter import InterpreterBackend

    assert {cls.name for cls in (CudaBackend, InterpreterBackend) if cls.timed} == set(TIMED_BACKENDS)
