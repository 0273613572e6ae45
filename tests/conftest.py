"""Test-wide setup: Triton runs in its CPU interpreter unless a GPU test says otherwise, and
tests marked `gpu` are skipped where CUDA is absent."""

from __future__ import annotations

import os

# Must be set before triton is imported anywhere in the test process.
os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest


def _cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _cuda_available():
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)
