"""Choosing where candidates are judged: the `harness` value, and the error when Ray is missing."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from atrl.errors import UsageError
from atrl.harness.api import Harness
from atrl.harness.select import HarnessTarget, make_harness, parse_harness


@pytest.mark.parametrize(("value", "target"), [
    ("local", HarnessTarget(ray=False)),
    ("ray", HarnessTarget(ray=True)),
    ("ray://head.example:10001", HarnessTarget(ray=True, address="ray://head.example:10001")),
])
def test_harness_values_name_their_target(value, target):
    assert parse_harness(value) == target


@pytest.mark.parametrize("value", ["rai", "ray://head", "ray:head:10001", "Local", ""])
def test_other_harness_values_are_refused_naming_the_choices(value):
    with pytest.raises(ValueError, match="local, ray or ray://HOST:PORT"):
        parse_harness(value)


def test_local_is_the_in_process_harness():
    harness = make_harness("local", backend="interpreter", workers=1)
    assert type(harness) is Harness
    harness.close()


@pytest.fixture
def without_ray(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError


def test_ray_without_the_package_names_the_extra(without_ray):
    with pytest.raises(UsageError, match=r"needs the `ray` package.*pip install 'atrl\[ray\]'"):
        make_harness("ray", backend="interpreter")


def test_connecting_without_the_package_names_the_extra(without_ray):
    from atrl.harness.distributed.fleet import connect

    with pytest.raises(UsageError, match=r"atrl\[ray\]"):
        connect("ray://head.example:10001")


def test_eval_refuses_ray_before_loading_anything_when_it_is_missing(without_ray, tmp_path):
    from atrl.eval.config import load_eval_config
    from atrl.eval.start import check_start

    config = load_eval_config(flags={"harness": "ray", "policy": "reference", "tasks": "relu"})
    with pytest.raises(UsageError, match=r"atrl\[ray\]"):
        check_start(config, tmp_path / "run")


def test_a_bad_harness_in_an_eval_config_is_one_usage_error():
    from atrl.eval.config import load_eval_config

    with pytest.raises(UsageError, match=r"harness 'rai' is not one of local, ray or ray://HOST:PORT"):
        load_eval_config(flags={"harness": "rai"})


def test_a_bad_harness_in_a_training_config_names_the_key():
    from atrl.rl.config import make_config

    with pytest.raises(UsageError, match=r"config key 'harness'.*local, ray or ray://HOST:PORT"):
        make_config({"harness": "rai"})
    assert make_config({"harness": "ray://head.example:10001"}).harness == "ray://head.example:10001"
