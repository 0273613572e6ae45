"""The NPUKernelBench loader: multi-case tasks from JSON lines, dtypes, tolerances, load errors."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from atrl.tasks.npukernelbench import (
    describe_case,
    load_npukernelbench,
    npu_tolerances,
)
from atrl.tasks.registry import get_task

TASK = '''
import json
import os
import torch
import torch.nn as nn

class Model(nn.Module):
    """Adds two tensors, scaled by alpha."""
    def forward(self, x, y, alpha):
        return torch.add(x, y, alpha=alpha)

def get_input_groups():
    path = os.path.join(os.path.dirname(__file__), "{stem}.json")
    groups = []
    for line in open(path):
        if line.strip():
            case = json.loads(line)["inputs"]
            groups.append([torch.randn(case[0]["shape"]), torch.randn(case[1]["shape"]), case[2]["value"]])
    return groups

def get_init_inputs():
    return []
'''


def tensor(name: str, dtype: str, shape: list[int]) -> dict:
    return {"name": name, "type": "tensor", "required": True, "dtype": dtype, "shape": shape}


def attr(name: str, value: object) -> dict:
    return {"name": name, "type": "attr", "required": True, "dtype": "float", "value": value}


def write_task(folder: Path, stem: str, lines: list[str] | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.py").write_text(textwrap.dedent(TASK).replace("{stem}", stem))
    if lines is not None:
        (folder / f"{stem}.json").write_text("\n".join(lines) + "\n")


def case_line(dtype: str, shape: list[int], alpha: float = 1.0) -> str:
    return json.dumps({"inputs": [tensor("x", dtype, shape), tensor("y", dtype, shape), attr("alpha", alpha)]})


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A MultiKernelBench-shaped checkout: root/reference/npukernelbench_level<L>/."""
    root = tmp_path / "mkb"
    level0 = root / "reference" / "npukernelbench_level0"
    level1 = root / "reference" / "npukernelbench_level1"
    write_task(level0, "1_add_fp32", [case_line("float32", [4, 8]), "", case_line("float32", [16], 0.5)])
    write_task(level0, "2_add_mixed", [case_line("fp32", [3]), case_line("fp16", [5]), case_line("float32", [7])])
    # a bare list of inputs per line is accepted too
    write_task(level0, "10_add_bf16", [json.dumps([tensor("x", "bf16", [2]), tensor("y", "bf16", [2]), attr("alpha", 2)])])
    write_task(level1, "1_add_bad_line", [case_line("float32", [2]), "{not json", case_line("float32", [3])])
    write_task(level1, "2_add_no_json", None)
    (level1 / "3_no_groups.py").write_text("class Model:\n    pass\n\ndef get_init_inputs():\n    return []\n")
    (level1 / "3_no_groups.json").write_text(case_line("float32", [1]) + "\n")
    return root


def by_name(tasks):
    return {t.name: t for t in tasks}


def test_tasks_load_as_multi_case_with_one_case_per_json_line(tree: Path) -> None:
    tasks, _ = load_npukernelbench(tree)
    assert [t.id for t in tasks] == [
        "npukernelbench/level0/1_add_fp32",
        "npukernelbench/level0/2_add_mixed",
        "npukernelbench/level0/10_add_bf16",
    ]
    task = tasks[0]
    assert task.multi_case and task.compute_policy == "strict" and task.level == 0
    assert [c.name for c in task.cases] == ["case00", "case01"]
    assert task.cases[1].spec[0]["shape"] == [16] and task.cases[1].spec[2]["value"] == 0.5
    assert describe_case(task.cases[0]) == "x: float32[4, 8], y: float32[4, 8], alpha=1.0"
    assert task.description == "Adds two tensors, scaled by alpha."
    assert task.summary()["cases"] == 2


def test_tolerances_follow_the_benchmark_and_mixed_dtypes_take_the_loosest(tree: Path) -> None:
    tasks = by_name(load_npukernelbench(tree)[0])
    fp32 = tasks["1_add_fp32"]
    assert fp32.dtype == "float32" and (fp32.rtol, fp32.atol) == (2.0**-13, 1e-5)
    mixed = tasks["2_add_mixed"]
    assert mixed.dtype == "float16" and (mixed.rtol, mixed.atol) == (2.0**-10, 1e-3)
    bf16 = tasks["10_add_bf16"]
    assert bf16.dtype == "bfloat16" and bf16.tolerances() == (1e-2, 2.0**-7)
    assert npu_tolerances("int32") == npu_tolerances("float32")


def test_bad_json_line_missing_json_and_missing_functions_are_reported_while_the_rest_load(tree: Path) -> None:
    tasks, errors = load_npukernelbench(tree)
    assert len(tasks) == 3
    messages = sorted(str(e) for e in errors)
    assert len(messages) == 3
    assert "1_add_bad_line.json:2: not valid JSON" in messages[0]
    assert "2_add_no_json.json: shape-case file is missing" in messages[1]
    assert "3_no_groups.py: does not define get_input_groups" in messages[2]


def test_tensor_without_shape_is_an_error_unless_optional(tmp_path: Path) -> None:
    folder = tmp_path / "level2"
    optional = {"name": "bias", "type": "tensor", "required": False, "dtype": "float16", "shape": None}
    write_task(folder, "1_ok", [json.dumps({"inputs": [tensor("x", "float16", [2]), optional]})])
    broken = dict(optional, required=True)
    write_task(folder, "2_bad", [json.dumps({"inputs": [broken]})])
    tasks, errors = load_npukernelbench(tmp_path)
    assert [t.name for t in tasks] == ["1_ok"]
    assert describe_case(tasks[0].cases[0]) == "x: float16[2], bias: None"
    assert len(errors) == 1 and "2_bad.json:1" in str(errors[0]) and "'bias'" in str(errors[0])


def test_plain_level_folders_and_no_levels_reported(tmp_path: Path) -> None:
    write_task(tmp_path / "a" / "level4", "1_add", [case_line("float16", [1])])
    tasks, errors = load_npukernelbench(tmp_path / "a")
    assert [t.id for t in tasks] == ["npukernelbench/level4/1_add"] and not errors
    (tmp_path / "empty").mkdir()
    tasks, errors = load_npukernelbench(tmp_path / "empty")
    assert not tasks and "no level<N>" in str(errors[0])


def test_registry_finds_npukernelbench_tasks_by_id(tree: Path) -> None:
    task = get_task("npukernelbench/level0/2_add_mixed", tree)
    assert len(task.cases) == 3
