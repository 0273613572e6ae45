"""Evaluating one candidate for one task: static checks, sandboxed workers, verdicts, score, feedback.

The public surface is `Harness` (and the one-shot `evaluate`) from `atrl.harness.api`, exposed here
lazily so that importing a submodule (a worker importing `atrl.harness.sandbox.worker`) stays light.

The folders follow the cascade, format ► static ► compile ► correctness ► profile:
  - `extract`: the format stage (the code block of a response), on the caller's side;
  - `static/`: the static checks, on the caller's side, before anything runs;
  - `sandbox/`: the worker processes that run candidate code: pool, worker, memory admission, crashes;
  - `stages/`: what runs inside a worker: `judge` (compile, correctness, profile) and its parts;
  - `feedback/`: failure classes, the diagnosis of a wrong result or a timeout, the feedback text;
  - `distributed/`: the judge on a Ray fleet of actors;
  - `verdict` (the record and its one constructor, `Verdict.failed`), `score`, `cache`, `select`
    (which harness a run uses) and `api` (`Harness`) stay here.
"""

from __future__ import annotations

from typing import Any

# Part of every cache key: bump it whenever a change to the harness can change a verdict.
HARNESS_VERSION = "30"
# The name of the Ray judge fleet's actors unless a run names another (atrl.harness.distributed.fleet).
DEFAULT_FLEET = "atrl-judges"

__all__ = ["HARNESS_VERSION", "Harness", "evaluate"]


def __getattr__(name: str) -> Any:
    if name in ("Harness", "evaluate"):
        from atrl.harness import api

        return getattr(api, name)
    raise AttributeError(f"module 'atrl.harness' has no attribute {name!r}")
