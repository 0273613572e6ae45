"""`atrl tasks list` and `atrl tasks show` over small suites written by the tests."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from atrl.cli import main

RELU = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    """Applies ReLU."""
    def forward(self, x):
        return torch.relu(x)

batch_size = 4096
dim = 65536

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []
'''


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    """KernelBench-shaped: two good level-1 tasks, one broken file, one level-4 task."""
    root = tmp_path / "kb" / "KernelBench"
    for rel, text in {
        "level1/19_ReLU.py": RELU,
        "level1/20_ReLU_again.py": RELU,
        "level1/21_Broken.py": "def get_inputs(:\n",
        "level4/1_hub_model.py": RELU,
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return tmp_path / "kb"


@pytest.fixture
def npu(tmp_path: Path) -> Path:
    folder = tmp_path / "npu" / "level0"
    folder.mkdir(parents=True)
    (folder / "1_relu.py").write_text(
        "import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n\n"
        "def get_input_groups():\n    return []\n\ndef get_init_inputs():\n    return []\n")
    case = {"inputs": [{"name": "x", "type": "tensor", "required": True, "dtype": "float16", "shape": [3, 5]}]}
    (folder / "1_relu.json").write_text(json.dumps(case) + "\n" + json.dumps(case) + "\n")
    return tmp_path / "npu"


def test_list_json_counts_tasks_and_reports_load_errors_on_stderr(kb: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["tasks", "list", "--suite", "kernelbench", "--path", str(kb), "--json"]) == 0
    out, err = capsys.readouterr()
    listed = json.loads(out)
    assert [t["id"] for t in listed] == [
        "kernelbench/level1/19_ReLU", "kernelbench/level1/20_ReLU_again", "kernelbench/level4/1_hub_model"]
    assert "skipped" in listed[2]["flags"]
    assert err.count("\n") == 1 and "21_Broken.py" in err


def test_list_level_filter_and_table(kb: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["tasks", "list", "--suite", "kernelbench", "--path", str(kb), "--level", "4"]) == 0
    out = capsys.readouterr().out
    assert "kernelbench/level4/1_hub_model" in out and "19_ReLU" not in out and "skipped" in out


def test_show_prints_metadata_and_source_at_the_small_preset(kb: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["tasks", "show", "kernelbench/level1/19_ReLU", "--path", str(kb)]) == 0
    out = capsys.readouterr().out
    assert "Applies ReLU." in out and "tags: activation" in out and "solution: no" in out
    assert "preset small: batch_size=256, dim=256" in out
    assert "batch_size = 256\n" in out and "dim = 256\n" in out


def test_show_full_preset_and_max_dim_resize_the_source(kb: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["tasks", "show", "kernelbench/level1/19_ReLU", "--path", str(kb), "--preset", "full"]) == 0
    assert "dim = 65536\n" in capsys.readouterr().out
    assert main(["tasks", "show", "kernelbench/level1/19_ReLU", "--path", str(kb), "--max-dim", "32", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["shown_at"] == {"preset": "max-dim 32", "values": {"batch_size": 32, "dim": 32}}
    assert "dim = 32\n" in shown["source"] and shown["compute_policy"] == "strict"


def test_show_npukernelbench_lists_cases_and_tolerances(npu: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["tasks", "show", "npukernelbench/level0/1_relu", "--path", str(npu)]) == 0
    out = capsys.readouterr().out
    assert "cases: 2" in out and "case01: x: float16[3, 5]" in out and "dtype: float16" in out
    assert main(["tasks", "list", "--suite", "npukernelbench", "--path", str(npu), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["cases"] == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tasks", "show", "kernelbench/level1/99_Nope"], "no task"),
        (["tasks", "list", "--suite", "kernelbench"], "needs a checkout"),
        (["tasks", "list", "--suite", "quantumbench"], "unknown suite"),
        (["tasks", "show", "kernelbench/level1/19_ReLU", "--preset", "huge"], "no preset 'huge'"),
        (["tasks", "show", "kernelbench/level1/19_ReLU", "--preset", "full", "--max-dim", "8"], "both given"),
    ],
)
def test_bad_input_prints_one_line_and_exits_2(
    kb: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture
) -> None:
    if argv[:2] == ["tasks", "show"]:
        argv = [*argv, "--path", str(kb)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.strip().count("\n") == 0


def test_max_dim_is_refused_for_multi_case_tasks(npu: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["tasks", "show", "npukernelbench/level0/1_relu", "--path", str(npu), "--max-dim", "8"]) == 2
    assert "shape cases" in capsys.readouterr().err
