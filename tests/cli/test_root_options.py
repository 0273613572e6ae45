"""The `atrl` command itself: `--version` from the package metadata, flags shown as flags in help."""

from __future__ import annotations

import importlib.metadata

import pytest

from atrl.cli import installed_version, main


def test_version_prints_the_installed_distribution_version(capsys, monkeypatch):
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "9.8.7" if name == "atrl" else "0")
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == "atrl 9.8.7"


def test_version_outside_an_install_says_so(monkeypatch):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert installed_version().endswith("(not installed)")


@pytest.mark.parametrize("command", [[], ["check"], ["eval"], ["tasks", "list"], ["kb", "search"]])
def test_help_shows_flags_without_a_value_type(command, capsys):
    assert main([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "--help" in out and "<bool>" not in out
