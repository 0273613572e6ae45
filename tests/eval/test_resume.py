"""No lost results: `atrl eval` killed with SIGKILL mid-run and resumed with the same command ends
with every (task, sample) exactly once in episodes.jsonl and trajectories.jsonl; journals tolerate
a torn last line."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from atrl.eval.config import EvalConfig
from atrl.eval.runner import TRAJECTORIES_FILE, prepare_run_dir
from atrl.jsonio import Journal, read_journal

TASKS = ("builtin/relu", "builtin/add", "builtin/leaky_relu")
SAMPLES = 2


def _command(out: Path) -> list[str]:
    return [sys.executable, "-m", "atrl", "eval", "--policy", "reference", "--backend", "interpreter",
            "--tasks", ",".join(TASKS), "--samples", str(SAMPLES), "--max-turns", "1", "--trials", "2",
            "--no-kb", "--no-cache", "--out", str(out)]


def _keys(path: Path) -> Counter:
    return Counter((r["task_id"], r["sample"]) for r in read_journal(path))


def _wait_for_first_record(proc: subprocess.Popen, path: Path, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= 1:
            return
        if proc.poll() is not None:
            pytest.fail(f"eval exited early with status {proc.returncode}: {proc.stderr.read()[-2000:]}")
        time.sleep(0.05)
    pytest.fail("no episode was journaled in time")


def test_journal_skips_a_torn_last_line_and_appends_after_it(tmp_path):
    path = tmp_path / "episodes.jsonl"
    with Journal(path) as journal:
        journal.append({"task_id": "a", "sample": 0})
        journal.append({"task_id": "a", "sample": 1})
    with path.open("ab") as fh:
        fh.write(b'{"task_id": "b", "sam')  # the writer was killed mid-line
    assert [r["sample"] for r in read_journal(path)] == [0, 1]
    with Journal(path) as journal:
        journal.append({"task_id": "b", "sample": 0})
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 3 and all(line.endswith(b"\n") for line in lines)
    assert [json.loads(line)["task_id"] for line in lines] == ["a", "a", "b"]


def test_resume_drops_a_trajectory_whose_episode_summary_never_landed(tmp_path):
    config = EvalConfig(tasks=list(TASKS), policy="reference", samples=SAMPLES)
    prepare_run_dir(config, tmp_path)
    with Journal(tmp_path / "episodes.jsonl") as episodes, Journal(tmp_path / TRAJECTORIES_FILE) as trajectories:
        episodes.append({"task_id": "builtin/relu", "level": 1, "sample": 0, "turns": []})
        trajectories.append({"task_id": "builtin/relu", "sample": 0})
        trajectories.append({"task_id": "builtin/relu", "sample": 1})  # killed before its summary
    finished = prepare_run_dir(config, tmp_path)
    assert finished == {("builtin/relu", 0)}
    assert _keys(tmp_path / TRAJECTORIES_FILE) == Counter({("builtin/relu", 0): 1})


@pytest.mark.slow
def test_eval_killed_mid_run_and_resumed_has_every_episode_exactly_once(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "ATRL_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen(_command(out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _wait_for_first_record(proc, out / "episodes.jsonl")
        time.sleep(random.uniform(0.0, 2.0))
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    first_pass = sum(_keys(out / "episodes.jsonl").values())
    assert 1 <= first_pass
    resumed = subprocess.run(_command(out), env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    expected = Counter({(t, s): 1 for t in TASKS for s in range(SAMPLES)})
    assert _keys(out / "episodes.jsonl") == expected
    assert _keys(out / TRAJECTORIES_FILE) == expected
    for name in ("episodes.jsonl", TRAJECTORIES_FILE):
        assert (out / name).read_bytes().endswith(b"\n")
    if first_pass < len(expected):
        assert "resumed" in resumed.stdout
