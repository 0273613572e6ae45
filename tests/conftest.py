"""Test-wide setup: Triton runs in its CPU interpreter unless a GPU test says otherwise, and
tests marked `gpu` are skipped where CUDA is absent."""

from __future__ import annotations

import os
import tempfile

import pytest


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
