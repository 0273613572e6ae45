"""scripts/experiment_atrl_vs_grpo.sh: usage, and the phases' refusals before any work starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "experiment_atrl_vs_grpo.sh"


def _run(*args: str, root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PY": sys.executable, "ROOT": str(root), "NGPU": "2"}
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)


def test_no_phase_prints_the_usage_and_exits_2(tmp_path):
    out = _run(root=tmp_path)
    assert out.returncode == 2 and "sft" in out.stdout and "summary" in out.stdout


def test_train_without_the_warm_start_names_the_missing_phase(tmp_path):
    out = _run("train", root=tmp_path)
    assert out.returncode == 2 and "run the sft phase first" in out.stderr


def test_eval_without_checkpoints_names_the_train_phase(tmp_path):
    out = _run("eval", root=tmp_path)
    assert out.returncode != 0 and "run (or resume) the train phase" in out.stderr
