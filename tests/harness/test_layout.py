"""The harness folders: every module imports under its path, and the module names the pool and the
worker use as strings name real code."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import atrl.harness
from atrl.harness.sandbox.pool import DEFAULT_RUNNER
from atrl.harness.sandbox.worker import load_runner
from atrl.harness.stages.judge import judge

HARNESS_MODULES = sorted(info.name for info in pkgutil.walk_packages(atrl.harness.__path__, "atrl.harness."))


@pytest.mark.parametrize("name", HARNESS_MODULES)
def test_every_harness_module_imports(name):
    importlib.import_module(name)


def test_the_default_runner_names_the_judge():
    assert load_runner(DEFAULT_RUNNER) is judge
