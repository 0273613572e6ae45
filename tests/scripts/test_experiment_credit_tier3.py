"""scripts/experiment_credit.sh's tier-3 phases end to end on a tiny random model and the interpreter
harness: runs carried to another machine in parts continue exactly; the runs, their held-out
evaluations and the summary agree on names; a second call resumes (nothing runs again); a missing
screen is refused before anything starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "experiment_credit.sh"
TINY_SET = ("rollout_engine=null bf16=false group_size=2 tasks_per_step=2 save_every=1 keep_checkpoints=2 "
            "harness_workers=1 kb=false agent.max_response_tokens=8 agent.summary_tokens=6 "
            "agent.context_budget=1500 agent.platform=interpreter")


def _run(root: Path, *phases: str, **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PY": sys.executable, "ROOT": str(root), "BACKEND": "interpreter",
           "T3_ARMS": "seg traj", "T3_SEEDS": "0", "T3_STEPS": "2", "T3_PARALLEL": "2", "T3_EVAL_STEPS": "1 2",
           "T3_SAMPLES": "1", "T3_SET": TINY_SET,
           "T3_EVAL_SET": "--max-response-tokens 8 --context-budget 1500 --no-kb --set summary_tokens=6 --set workers=1",
           **env}
    return subprocess.run(["bash", str(SCRIPT), *phases], capture_output=True, text=True, env=env, timeout=600)


def test_a_missing_screen_is_refused_before_any_run(tmp_path):
    out = _run(tmp_path, "tier3", T3_SCREEN=str(tmp_path / "none.ids"), T3_START="hf:x")
    assert out.returncode == 2 and "screen the start first" in out.stderr
    assert not list(tmp_path.glob("t3-*"))


def test_t3_bring_brings_only_the_runs_named(tmp_path):
    """A device call returns at most 8 files and a run's checkpoint is 4 parts: T3_BRING picks runs."""
    for name in ("t3-seg-s0", "t3-seg-s1", "t3-traj-s0"):
        step = tmp_path / "root" / name / "checkpoints" / "step_000003"
        (step / "model").mkdir(parents=True)
        (step / "model" / "adapter_model.safetensors").write_bytes(b"w" * 1000)
        (step.parent / "latest").write_text("step_000003")
        (step.parent.parent / "metrics.jsonl").write_text('{"step": 3}\n')
    out = _run(tmp_path / "root", "t3-bring", OUTDIR=str(tmp_path / "out"), T3_BRING="t3-seg-s1 t3-traj-s0")
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["t3-seg-s1-ckpt.part00", "t3-traj-s0-ckpt.part00"]
    everything = _run(tmp_path / "root", "t3-bring", OUTDIR=str(tmp_path / "all"))
    assert everything.returncode == 0 and len(list((tmp_path / "all").iterdir())) == 3
    # the records come back without any rollouts (a screen's are tens of MB)
    (tmp_path / "root" / "screen").mkdir()
    (tmp_path / "root" / "screen" / "trajectories.jsonl").write_text("{}\n")
    assert _run(tmp_path / "root", "bring", OUTDIR=str(tmp_path / "records")).returncode == 0
    with tarfile.open(tmp_path / "records" / "credit-records.tgz") as records:
        names = records.getnames()
    assert "./t3-seg-s0/metrics.jsonl" in names and not any(n.endswith("trajectories.jsonl") for n in names)


def test_t3_bring_carries_milestones_not_yet_evaluated_and_t3_restore_puts_them_back(tmp_path):
    run = tmp_path / "first" / "t3-seg-s0"
    for step in (10, 12):
        model = run / "checkpoints" / f"step_{step:06d}" / "model"
        model.mkdir(parents=True)
        (model / "adapter_model.safetensors").write_bytes(bytes([step]) * 1000)
    (run / "checkpoints" / "latest").write_text("step_000012")
    (run / "metrics.jsonl").write_text("".join(f'{{"step": {i}}}\n' for i in range(1, 13)))
    parts = tmp_path / "parts"
    milestones = {"T3_EVAL_STEPS": "10 20 40"}
    assert _run(tmp_path / "first", "t3-bring", OUTDIR=str(parts), **milestones).returncode == 0
    assert sorted(p.name for p in parts.iterdir()) == ["t3-seg-s0-ckpt.part00", "t3-seg-s0-step10-milestone.part00"]
    restored = _run(tmp_path / "second", "t3-restore", T3_PARTS=str(parts))
    assert restored.returncode == 0 and "a milestone to evaluate" in restored.stdout, restored.stderr
    for step in (10, 12):
        name = f"t3-seg-s0/checkpoints/step_{step:06d}/model/adapter_model.safetensors"
        assert (tmp_path / "second" / name).read_bytes() == (tmp_path / "first" / name).read_bytes()
    assert (tmp_path / "second" / "t3-seg-s0" / "checkpoints" / "latest").read_text().strip() == "step_000012"
    # once evaluated, a milestone stays behind
    evaluated = tmp_path / "first" / "t3-eval" / "seg-s0-step10"
    evaluated.mkdir(parents=True)
    (evaluated / "metrics.json").write_text("{}")
    again = tmp_path / "again"
    assert _run(tmp_path / "first", "t3-bring", OUTDIR=str(again), **milestones).returncode == 0
    assert [p.name for p in again.iterdir()] == ["t3-seg-s0-ckpt.part00"]


def _records(run: Path) -> list[dict]:
    timing = ("time_", "generation_tokens_per_s", "judge_")
    return [{k: v for k, v in json.loads(line).items() if not k.startswith(timing)}
            for line in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_tier3_carries_its_runs_to_another_machine_then_evaluates_summarises_and_resumes(tmp_path):
    from atrl.rl.tiny import build_tiny_model

    build_tiny_model(tmp_path / "tiny", 0)
    (tmp_path / "screen.ids").write_text("task_ids=[builtin/add, builtin/relu]\n")
    env = {"T3_START": f"hf:{tmp_path / 'tiny'}", "T3_SCREEN": str(tmp_path / "screen.ids")}
    first, second, parts = tmp_path / "first", tmp_path / "second", tmp_path / "parts"
    # one stretch: a step of each run, brought back in parts; the next machine restores and goes on
    assert _run(first, "tier3", T3_STEPS="1", **env).returncode == 0
    brought = _run(first, "t3-bring", OUTDIR=str(parts), **env)
    assert brought.returncode == 0 and brought.stdout.count("step_000001") == 2
    restored = _run(second, "t3-restore", T3_PARTS=str(parts), **env)
    assert restored.returncode == 0 and restored.stdout.count("<- step_000001 (1 steps of metrics)") == 2
    out = _run(second, "tier3", "tier3-eval", "tier3-summary", **env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    straight = tmp_path / "straight"  # the same run without the move
    assert _run(straight, "tier3", T3_ARMS="seg", **env).returncode == 0
    assert _records(second / "t3-seg-s0") == _records(straight / "t3-seg-s0")
    # resumed, not started again: step 1's episodes stayed on the first machine
    assert sorted(p.name for p in (second / "t3-seg-s0" / "trajectories").iterdir()) == ["step_0002.jsonl"]
    data = json.loads((second / "t3-summary" / "summary.json").read_text())
    assert sorted(data["training"]["arms"]) == ["seg", "traj"]
    assert all(arm["multi_segment_fraction"] == 1.0 for arm in data["training"]["arms"].values())
    assert sorted(data["heldout"]["steps"]) == ["1", "2"] and data["heldout"]["start"]["episodes"] > 0
    again = _run(second, "tier3", "tier3-eval", **env)
    assert again.returncode == 0
    assert again.stdout.count("finished:") == 2 + 5 and "done" not in again.stdout  # 2 runs, 5 evaluations


def test_tier3_runs_and_evaluations_share_the_cores_and_return_freed_gpu_memory(tmp_path):
    """Runs side by side on one GPU machine: each gets its share of the cores (16 OpenMP threads
    each oversubscribed 16 cores three times over) and the expandable allocator."""
    seen = tmp_path / "seen"
    fake = tmp_path / "fake_python"
    fake.write_text(f'#!/usr/bin/env bash\necho "$OMP_NUM_THREADS $PYTORCH_CUDA_ALLOC_CONF" >> {seen}\n')
    fake.chmod(0o755)
    screen = tmp_path / "screen.ids"
    screen.write_text("task_ids=[builtin/relu]")
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "PYTORCH_CUDA_ALLOC_CONF")}
    common = {"PY": str(fake), "ROOT": str(tmp_path / "root"), "T3_SCREEN": str(screen), "T3_START": "hf:x",
              "T3_ARMS": "seg", "T3_SEEDS": "0 1", "T3_PARALLEL": "2", "T3_EVAL_STEPS": "1"}
    for phase in ("tier3", "tier3-eval"):
        out = subprocess.run(["bash", str(SCRIPT), phase], capture_output=True, text=True, env={**env, **common},
                             timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
    threads = max(1, len(os.sched_getaffinity(0)) // 2)  # what nproc counts
    lines = seen.read_text().splitlines()
    assert len(lines) == 3  # two runs, the start's evaluation
    assert set(lines) == {f"{threads} expandable_segments:True"}


def test_watch_shows_each_runs_steps_and_what_its_last_step_cost(tmp_path):
    """What decides the schedule, read without leaving the device call: steps so far, the last
    step's seconds by phase and, where logged, each phase's GPU peak."""
    run = tmp_path / "t3-seg-s0"
    run.mkdir()
    record = {"step": 2, "time_step_s": 72.4, "time_generation_s": 25.4, "time_evaluation_s": 35.9,
              "time_update_s": 10.4, "gpu_peak_rollout_gib": 18.25, "gpu_peak_update_gib": 12.5}
    (run / "metrics.jsonl").write_text(json.dumps({"step": 1}) + "\n" + json.dumps(record) + "\n")
    (tmp_path / "t3-seg-s1").mkdir()  # started, no step yet
    (tmp_path / "detached.log").write_text("[tier3] runs/credit-t3/t3-seg-s1\nstep 2/40  reward 1.188\n0.0000  |dW| 1.29e-01\n")
    out = _run(tmp_path, "watch", WATCH_S="1")
    assert out.returncode == 0, out.stderr
    assert ("t3-seg-s0: 2 of 2 steps; step 2: 72 s (generation 25, judging 36, update 10), "
            "rollout peak 18.2 GiB, update peak 12.5 GiB") in out.stdout
    assert "t3-seg-s1: 0 of 2 steps\n" in out.stdout
    assert "finished runs: 0; [tier3] runs/credit-t3/t3-seg-s1\n" in out.stdout  # the phase's line, not a run's
