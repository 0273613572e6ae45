"""scripts/device_setup.sh: a training checkpoint carried in parts over several calls comes back whole."""

from __future__ import annotations

import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "device_setup.sh"


def _call(tree: Path, home: Path, after: str = "") -> subprocess.CompletedProcess:
    """One GPU call: the tree as it travels (only what this call carries), the setup sourced."""
    command = f"source {SCRIPT}; {after}"
    return subprocess.run(["bash", "-c", command], cwd=tree, capture_output=True, text=True,
                          env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, timeout=60)


def test_a_checkpoint_carried_in_parts_over_two_calls_is_restored_into_the_run(tmp_path):
    step = tmp_path / "made" / "step_000005"
    (step / "model").mkdir(parents=True)
    (step / "model" / "adapter_model.safetensors").write_bytes(bytes(range(256)) * 400)
    (step / "trainer_state.pt").write_bytes(b"state" * 3000)
    parts = tmp_path / "parts"
    parts.mkdir()
    subprocess.run(f"tar cf - -C {step.parent} step_000005 | split -b 40000 -d - {parts}/ckpt.part",
                   shell=True, check=True)
    names = sorted(p.name for p in parts.iterdir())
    assert len(names) >= 3
    home = tmp_path / "home"
    for call, carried in enumerate((names[:2], names[2:])):
        tree = tmp_path / f"call{call}"
        (tree / ".rlckpt").mkdir(parents=True)
        for name in carried:
            (tree / ".rlckpt" / name).write_bytes((parts / name).read_bytes())
        assert _call(tree, home).returncode == 0
    records = tmp_path / "records.jsonl"
    records.write_text('{"step": 1}\n')
    run = tmp_path / "final" / "runs" / "rl"
    run.parent.mkdir(parents=True)
    out = _call(tmp_path / "final", home, f"restore_checkpoint {run} {records}")
    assert out.returncode == 0, out.stderr
    restored = run / "checkpoints" / "step_000005"
    assert (restored / "model" / "adapter_model.safetensors").read_bytes() == bytes(range(256)) * 400
    assert (restored / "trainer_state.pt").read_bytes() == b"state" * 3000
    assert (run / "metrics.jsonl").read_text() == '{"step": 1}\n'
    from atrl.rl.checkpoint import latest_checkpoint

    assert latest_checkpoint(run) == restored  # the trainer resumes from it, not from scratch


def test_the_model_carried_in_three_parts_is_joined_and_checked(tmp_path):
    import hashlib

    model = bytes(range(256)) * 1000
    chunks = [model[:100_000], model[100_000:200_000], model[200_000:]]
    home = tmp_path / "home"
    for index, chunk in enumerate(chunks[:2]):
        tree = tmp_path / f"call{index}"
        (tree / ".m").mkdir(parents=True)
        (tree / ".m" / f"part0{index}").write_bytes(chunk)
        out = subprocess.run(["bash", str(SCRIPT), f"part0{index}"], cwd=tree, capture_output=True, text=True,
                             env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, timeout=60)
        assert out.returncode == 0, out.stderr
    third = tmp_path / "call2"  # the last part on its own, like the first two
    (third / ".m").mkdir(parents=True)
    (third / ".m" / "part02").write_bytes(chunks[2])
    subprocess.run(["bash", str(SCRIPT), "part02"], cwd=third, check=True, capture_output=True,
                   env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, timeout=60)
    last = tmp_path / "call3"  # then the checksum with no part beside it
    (last / ".m").mkdir(parents=True)
    (last / ".m" / "sha256").write_text(hashlib.sha256(model).hexdigest() + "\n")
    out = _call(last, home, 'echo "GGUF=$ATRL_SMOLLM2_GGUF"')
    assert out.returncode == 0 and out.stderr == "", out.stderr
    joined = Path(out.stdout.split("GGUF=")[1].strip())
    assert joined.read_bytes() == model
    (last / ".m" / "sha256").write_text("0" * 64 + "\n")  # a part lost between calls: named, not used
    out = _call(last, home, 'echo "GGUF=$ATRL_SMOLLM2_GGUF"')
    assert "checksum mismatch" in out.stderr and "GGUF=\n" in out.stdout


def test_the_ray_wheel_is_joined_only_once_every_part_has_come(tmp_path):
    import hashlib

    wheel = bytes(range(256)) * 900
    chunks = [wheel[:80_000], wheel[80_000:160_000], wheel[160_000:]]
    home = tmp_path / "home"
    joined = []
    for index, chunk in enumerate(chunks):
        tree = tmp_path / f"call{index}"  # one part per call, with the wheel's name, count and checksum
        (tree / ".rayp").mkdir(parents=True)
        (tree / ".rayw").mkdir()
        (tree / ".rayp" / f"part0{index}").write_bytes(chunk)
        (tree / ".rayp" / "name").write_text("ray-test.whl\n")
        (tree / ".rayp" / "count").write_text("3\n")
        (tree / ".rayp" / "sha256").write_text(hashlib.sha256(wheel).hexdigest() + "\n")
        _call(tree, home)
        joined.append(tree / ".rayw" / "ray-test.whl")
    assert not joined[0].exists() and not joined[1].exists()
    assert joined[2].read_bytes() == wheel
