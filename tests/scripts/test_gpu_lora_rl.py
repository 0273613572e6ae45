"""scripts/gpu_lora_rl.sh collect: what comes back from a GPU machine is enough to build the next stage."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_lora_rl.sh"


def test_collect_brings_the_records_and_the_rollouts_a_later_stage_is_built_from(tmp_path):
    root, out = tmp_path / "run", tmp_path / "out"
    for name, text in {
        "screen/trajectories.jsonl": '{"screen": 1}\n',
        "screen/episodes.jsonl": '{"episode": 1}\n',
        "screen/report.md": "# report\n",
        "screen2/trajectories.jsonl": '{"screen": 2}\n',
        "branch/trajectories.jsonl": '{"branch": 1}\n',
        "branch/branches.jsonl": '{"branch": 1}\n',
        "lsft/metrics.jsonl": '{"step": 1}\n',
        "screen.log": "log\n",
        "screen.ids": "task_ids=[builtin/add]\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    env = {**os.environ, "ROOT": str(root), "OUTDIR": str(out), "PY": sys.executable}
    done = subprocess.run(["bash", str(SCRIPT), "collect"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with tarfile.open(out / "rollouts.txz") as tar:
        rollouts = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
    assert rollouts == {
        "screen/trajectories.jsonl": '{"screen": 1}\n',
        "screen2/trajectories.jsonl": '{"screen": 2}\n',
        "branch/trajectories.jsonl": '{"branch": 1}\n',
    }
    with tarfile.open(out / "records.tgz") as tar:
        records = {m.name for m in tar.getmembers() if m.isfile()}
    assert {"screen/episodes.jsonl", "screen/report.md", "branch/branches.jsonl", "lsft/metrics.jsonl",
            "screen.ids", "screen.log"} <= records
    assert not any(name.endswith("trajectories.jsonl") for name in records)  # the big files travel compressed
