"""No lost results in training: `atrl train --config configs/tiny-cpu.yaml` killed with SIGKILL after
its first metrics record and resumed with the same command ends with contiguous, unique steps in
metrics.jsonl. Runs once the trainer's CLI and the tiny CPU config exist."""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atrl.jsonio import read_journal

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "tiny-cpu.yaml"
READY = CONFIG.exists() and importlib.util.find_spec("atrl.cli.train") is not None


def _command(out: Path) -> list[str]:
    # 6 steps, a checkpoint every 2: the kill lands before or after the first checkpoint
    return [sys.executable, "-m", "atrl", "train", "--config", str(CONFIG), "--set", "steps=6",
            "--set", "save_every=2", "--out", str(out)]


def _steps(out: Path) -> list[int]:
    return [int(r["step"]) for r in read_journal(out / "metrics.jsonl")]


@pytest.mark.slow
@pytest.mark.skipif(
    not READY, reason="the trainer CLI (atrl.cli.train) or configs/tiny-cpu.yaml is not in this tree yet"
)
def test_train_killed_after_first_step_and_resumed_has_contiguous_unique_steps(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "ATRL_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        _command(out),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 600
        while not _steps(out):
            if proc.poll() is not None:
                pytest.fail(f"train exited early with status {proc.returncode}: {proc.stderr.read()[-2000:]}")
            assert time.monotonic() < deadline, "no metrics record in time"
            time.sleep(0.1)
        time.sleep(random.uniform(0.0, 3.0))
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = _steps(out)
    resumed = subprocess.run(_command(out), cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    steps = _steps(out)
    assert steps == list(range(steps[0], steps[0] + len(steps))), steps  # contiguous, no repeats
    assert len(steps) >= len(before)
    assert (out / "metrics.jsonl").read_bytes().endswith(b"\n")
