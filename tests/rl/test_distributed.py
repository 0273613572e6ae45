"""Data parallelism through `accelerate` on the CPU (2 processes, gloo): a 2-rank update over rows
split between ranks equals the single-process update over all rows (the global token-mean
normaliser), and a 2-process `atrl train` run logs once per step, checkpoints and resumes exactly."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from atrl.jsonio import read_journal

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("distributed_worker.py")
TIMING = ("time_generation_s", "time_evaluation_s", "time_update_s", "time_step_s", "generation_tokens_per_s")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK")}
    env["OMP_NUM_THREADS"] = "1"
    return env


def _launch(*args: str) -> None:
    """Run `args` in 2 CPU processes. torchrun, not `accelerate launch`: on the CPU the latter
    starts several processes only through MPI (see configs/accelerate/cpu-2proc.yaml); the
    trainer's Accelerator sets up gloo from torchrun's environment either way."""
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
               "--master_addr", "127.0.0.1", "--master_port", str(_free_port()), *args]
    done = subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]


def _train(out: Path, steps: int) -> None:
    _launch("-m", "atrl", "train", "--config", str(ROOT / "configs" / "tiny-cpu.yaml"), "--out", str(out),
            "--set", f"steps={steps}", "--set", "save_every=2")


@pytest.mark.slow
def test_two_rank_update_equals_single_process_update_over_all_rows(tmp_path):
    single, double = tmp_path / "single", tmp_path / "double"
    single.mkdir()
    double.mkdir()
    subprocess.run([sys.executable, str(WORKER), str(single)], cwd=ROOT, env=_env(), check=True,
                   capture_output=True, timeout=300)
    _launch(str(WORKER), str(double))
    alone = torch.load(single / "rank0.pt")
    ranks = [torch.load(double / f"rank{r}.pt") for r in range(2)]
    for result in ranks:
        assert result["tokens"] == alone["tokens"]  # stats summed over ranks
        assert result["loss"] == pytest.approx(alone["loss"], rel=1e-5, abs=1e-7)
        assert result["grad_norm"] == pytest.approx(alone["grad_norm"], rel=1e-4)
        assert result["grads"].keys() == alone["grads"].keys()
        for name, grad in alone["grads"].items():
            torch.testing.assert_close(result["grads"][name], grad, rtol=1e-4, atol=1e-6, msg=name)
    # the replicas stay identical (Adam's g/(|g|+eps) amplifies the round-off of near-zero
    # gradients, so weights are compared between ranks, gradients against the single process)
    for name, weight in ranks[0]["weights"].items():
        assert torch.equal(ranks[1]["weights"][name], weight), name


@pytest.mark.slow
def test_two_process_run_logs_once_per_step_checkpoints_and_resumes_exactly(tmp_path):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    _train(straight, steps=3)
    _train(resumed, steps=2)  # stops at its step-2 checkpoint, then a second launch resumes it
    assert (resumed / "checkpoints" / "step_000002" / "model" / "config.json").exists()
    assert [r["step"] for r in read_journal(resumed / "metrics.jsonl")] == [1, 2]
    _train(resumed, steps=3)

    logged = list(read_journal(resumed / "metrics.jsonl"))
    reference = list(read_journal(straight / "metrics.jsonl"))
    assert [r["step"] for r in logged] == [r["step"] for r in reference] == [1, 2, 3]
    assert all(r["episodes"] == 8 for r in logged)  # both ranks' episodes: 2 tasks × G=4

    def strip(r: dict) -> dict:
        return {k: v for k, v in r.items() if k not in TIMING}

    assert [strip(r) for r in logged] == [strip(r) for r in reference]
    step3 = (resumed / "trajectories" / "step_0003.jsonl").read_text()
    assert step3 == (straight / "trajectories" / "step_0003.jsonl").read_text()
    assert len(step3.splitlines()) == 8


@pytest.mark.slow
def test_an_fsdp_sharded_run_resumes_from_its_checkpoint_exactly(tmp_path):
    """2 FSDP ranks (torch's fully_shard on the CPU): 4 steps with a checkpoint after step 2, then a
    fresh start that resumes it makes steps 3–4 as in the uninterrupted run: losses and weights
    bit for bit."""
    worker = Path(__file__).with_name("fsdp_worker.py")
    _launch(str(worker), "straight", str(tmp_path))
    _launch(str(worker), "resume", str(tmp_path))
    whole, rest = torch.load(tmp_path / "straight.pt"), torch.load(tmp_path / "resume.pt")
    assert len(whole["losses"]) == 4 and rest["losses"] == whole["losses"][2:]
    assert rest["weights"].keys() == whole["weights"].keys()
    for name, weight in whole["weights"].items():
        assert torch.equal(rest["weights"][name], weight), name
    saved = torch.load(tmp_path / "checkpoints" / "step_000002" / "trainer_state.pt", weights_only=False)
    state = saved["optimizer_by_name"]["state"]
    assert "model.layers.0.self_attn.q_proj.weight" in state  # whole, by name: not one rank's shard
    assert state["model.layers.0.self_attn.q_proj.weight"]["exp_avg"].shape == (32, 32)
