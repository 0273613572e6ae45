"""`atrl check`: exit 0 when correct, 1 when not, 2 on usage errors; --json prints the Verdict."""

from __future__ import annotations

import json

import pytest

from atrl.cli import main
from atrl.tasks.registry import get_task


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("ATRL_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def solution_file(tmp_path):
    path = tmp_path / "relu.py"
    path.write_text(get_task("builtin/relu").solution)
    return path


def test_correct_candidate_exits_zero_and_prints_json(solution_file, capsys):
    status = main(["check", "--task", "builtin/relu", "--candidate", str(solution_file), "--backend", "interpreter",
                   "--trials", "2", "--json"])
    verdict = json.loads(capsys.readouterr().out)
    assert status == 0
    assert verdict["ok"] is True and verdict["task_id"] == "builtin/relu" and verdict["backend"] == "interpreter"


def test_wrong_candidate_exits_one_with_readable_output(tmp_path, capsys):
    path = tmp_path / "empty.py"
    path.write_text("Here is my answer: I am not sure.")
    status = main(["check", "--task", "relu", "--candidate", str(path), "--backend", "interpreter", "--no-cache"])
    out = capsys.readouterr().out
    assert status == 1
    assert "format:no-code" in out and "feedback" in out


@pytest.mark.parametrize("args", [
    ["--task", "builtin/relu", "--candidate", "missing-file.py"],
    ["--task", "builtin/no_such_task", "--candidate", "{file}"],
    ["--task", "builtin/relu", "--candidate", "{file}", "--preset", "enormous"],
    ["--task", "builtin/relu", "--candidate", "{file}", "--backend", "tpu"],
])
def test_usage_errors_exit_two(args, solution_file, capsys):
    status = main(["check", *[a.format(file=solution_file) for a in args]])
    assert status == 2
    assert "error:" in capsys.readouterr().err


def test_cuda_backend_without_gpu_exits_two(solution_file, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    assert main(["check", "--task", "builtin/relu", "--candidate", str(solution_file), "--backend", "cuda"]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err


def test_binary_candidate_file_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "blob.py"
    path.write_bytes(b"\xff\xfe\x00binary")
    assert main(["check", "--task", "builtin/relu", "--candidate", str(path), "--backend", "interpreter"]) == 2
    assert "not UTF-8" in capsys.readouterr().err


def test_directory_as_candidate_is_named_a_directory_with_a_file_to_pass(tmp_path, capsys):
    folder = tmp_path / "kernels"
    folder.mkdir()
    (folder / "relu.py").write_text("x = 1\n")
    assert main(["check", "--task", "builtin/relu", "--candidate", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and "not found" not in err
    assert str(folder / "relu.py") in err.replace("\n", "")


def test_trials_line_says_the_extra_trials_are_wide_input_ones(solution_file, capsys):
    status = main(["check", "--task", "builtin/relu", "--candidate", str(solution_file), "--backend", "interpreter",
                   "--trials", "2"])
    assert status == 0
    assert "Trials passed: 4/4 (2 trials + 2 wide-input)." in capsys.readouterr().out


def test_a_cached_check_never_imports_torch(solution_file, monkeypatch, tmp_path):
    """A cache hit is answered from disk: the start-up must not pay for importing torch."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    args = ["check", "--task", "builtin/relu", "--candidate", str(solution_file), "--backend", "interpreter",
            "--trials", "2"]
    assert main(args) == 0  # judged once: the verdict is now cached
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    probe = "import sys; from atrl.cli import main; status = main(sys.argv[1:]); print('torch', 'torch' in sys.modules, status)"
    done = subprocess.run([sys.executable, "-c", probe, *args], env=env, capture_output=True, text=True, timeout=120)
    assert "(cached)" in done.stdout, done.stdout + done.stderr
    assert done.stdout.strip().endswith("torch False 0"), done.stdout + done.stderr
