"""Test-wide setup: Triton runs in its CPU interpreter unless a GPU test says otherwise, and
tests marked `gpu` are skipped where CUDA is absent."""

from __future__ import annotations

import os
import tempfile

import pytest

# Under pytest-xdist (the README's `-n 2` on a 2-core machine) each worker process gets one core:
# one OpenMP thread in it and in the processes it starts, since two workers with a pool of two threads
# each oversubscribe the cores (the heaviest test files ran 30% faster so). Set before torch loads.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")


def _cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


# Without a GPU, Triton kernels run in the CPU interpreter. Set before triton is imported anywhere
# in the test process. (Harness workers set their backend's environment themselves.)
if not _cuda_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
# Measured reference FLOPs (the KernelBench work bound) go to a folder of the test run, not the user's cache.
os.environ.setdefault("ATRL_FLOPS_CACHE_DIR", tempfile.mkdtemp(prefix="atrl-flops-"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _cuda_available():
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)
