"""On-disk cache of verdicts, so a candidate already judged costs no worker.

The key covers everything that decides a verdict: the task (id, the hash of its source at the
preset, its tolerances and policy), the candidate's extracted code, the backend and device, the
harness version, and the judge options that change results (trials, timed calls, seed, ...).
One JSON file per key under `<cache_dir>/<task>/`; writes are atomic (temp file + rename), so a
reader never sees a torn record and concurrent writers of the same key simply agree.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from atrl.harness.verdict import Verdict, candidate_hash
from atrl.jsonio import dumps, to_jsonable, write_atomic
from atrl.tasks.task import Task

# Verdicts that depend on the machine's state rather than the candidate (a loaded machine can
# time out a fine kernel, a missing package fails a task's reference); they are not stored, so a
# later evaluation tries again.
UNCACHED_CLASSES = frozenset({"timeout", "crash", "out-of-memory", "cuda:error", "device-busy", "task:reference-error"})


def default_cache_dir() -> Path:
    """`$ATRL_CACHE_DIR`, else `~/.cache/atrl/verdicts`."""
    env = os.environ.get("ATRL_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "atrl" / "verdicts"


def cache_key(task: Task, preset: str | None, code: str, backend: str, device: str, harness_version: str,
              options: dict[str, Any]) -> str:
    """Hex sha256 naming one evaluation. `options`: the judge options that change a verdict."""
    parts = {
        "task": task.id,
        "task_source": hashlib.sha256(task.source_at(preset).encode()).hexdigest(),
        "task_checks": [task.dtype, task.atol, task.rtol, task.precision_bound, task.compute_policy,
                        task.reference_mutates_inputs, sorted(task.allow_torch)],
        "preset": preset,
        "candidate": candidate_hash(code),
        "candidate_full": hashlib.sha256(code.encode()).hexdigest(),
        "backend": backend,
        "device": device,
        "harness": harness_version,
        "options": to_jsonable(options),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class VerdictCache:
    """Verdicts stored as `<root>/<task id with / as __>/<key>.json`."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()

    def _path(self, task_id: str, key: str) -> Path:
        return self.root / task_id.replace("/", "__") / f"{key}.json"

    def get(self, task_id: str, key: str) -> Verdict | None:
        """The stored verdict with `cached=True`, or None (missing or unreadable)."""
        path = self._path(task_id, key)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        try:
            verdict = Verdict.from_dict(data)
        except TypeError:
            return None  # written by an incompatible version of the record
        verdict.cached = True
        return verdict

    def put(self, task_id: str, key: str, verdict: Verdict) -> bool:
        """Store a verdict atomically. Returns False when its class is not cacheable."""
        if verdict.error_class in UNCACHED_CLASSES:
            return False
        write_atomic(self._path(task_id, key), dumps(verdict))
        return True
