"""scripts/experiment_credit.sh's tier-1 positive control on the key relay, end to end on a tiny
random model: the start's rollouts are collected once (two groups per task here: more groups than
tasks), every estimator's gradient is compared on them, and the rollouts travel in nothing that `bring` returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "experiment_credit.sh"
TINY_RATE_SET = ("--set bf16=false --set agent.context_budget=1200 --set agent.max_response_tokens=6 "
                 "--set agent.summary_tokens=6 --set agent.platform=interpreter")


def _run(root: Path, *phases: str, **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PY": sys.executable, "ROOT": str(root), "RELAY_T1_TASKS": "4", "SAMPLES": "2",
           "RELAY_RATE_SET": TINY_RATE_SET, **env}
    return subprocess.run(["bash", str(SCRIPT), *phases], capture_output=True, text=True, env=env, timeout=600)


def test_relay_tier1_collects_once_then_compares_the_estimators(tmp_path):
    from atrl.rl.tiny import build_tiny_model

    build_tiny_model(tmp_path / "tiny", 0)
    root, start = tmp_path / "root", f"hf:{tmp_path / 'tiny'}"
    out = _run(root, "relay-collect", "relay-gradients", "bring", RELAY_START=start, OUTDIR=str(tmp_path / "out"),
               RELAY_T1_GROUPS="2", RELAY_T1_CHUNK="2")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    data = json.loads((root / "relay-gradients" / "gradients.json").read_text())
    assert data["groups"] == 8 and data["episodes"] == 16 and set(data["results"]) == {"seg", "traj", "grpo"}
    assert set(data["differences"]) == {"seg − traj", "seg − grpo"}
    with tarfile.open(tmp_path / "out" / "credit-records.tgz") as records:
        names = records.getnames()
    assert "./relay-gradients/gradients.json" in names and "./relay-rollouts/rates.json" in names
    assert not any(name.endswith("trajectories.jsonl") for name in names)
    parts = sorted((tmp_path / "out").glob("relay-gradients-gradients.pt.part*"))  # the per-group gradients
    assert parts and b"".join(p.read_bytes() for p in parts) == (root / "relay-gradients" / "gradients.pt").read_bytes()
    again = _run(root, "relay-collect", RELAY_START=start)
    assert again.returncode == 0 and "[relay-collect] finished" in again.stdout
    # tier 1's own phase reads rollouts from any `atrl eval`-shaped directory (e.g. the tier-3 screen)
    other = _run(root, "gradients", START=start, T1_ROLLOUTS=str(root / "relay-rollouts"))
    assert other.returncode == 0 and json.loads((root / "gradients" / "gradients.json").read_text())["groups"] == 4
    # (there each task's samples are one group: 4 tasks, 4 episodes each), or groups of T1_GROUP_SIZE
    split = _run(root, "gradients", START=start, T1_ROLLOUTS=str(root / "relay-rollouts"), T1_GROUP_SIZE="2")
    assert split.returncode == 0 and json.loads((root / "gradients" / "gradients.json").read_text())["groups"] == 8


def test_without_a_start_the_rule_says_which_phase_to_run(tmp_path):
    out = _run(tmp_path, "relay-collect")
    assert out.returncode == 2 and "relay-start" in out.stderr
    assert not (tmp_path / "relay-rollouts").exists()
