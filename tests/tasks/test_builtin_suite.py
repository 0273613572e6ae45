"""The builtin suite as shipped: it loads cleanly, is large and varied enough, every task has
runnable presets, and a malformed task file is reported without hiding the others."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from atrl.tasks.builtin_suite import BUILTIN_DIR, load_builtin
from atrl.tasks.resize import integer_constants

TASKS, ERRORS = load_builtin()
LEVEL1_FAMILIES = {
    "elementwise", "activation", "reduction", "normalization", "softmax", "matmul", "layout",
    "cumulative", "gather", "loss",
}


def test_builtin_suite_loads_without_errors():
    assert ERRORS == []


def test_builtin_suite_has_at_least_fifty_tasks_over_three_levels():
    assert len(TASKS) >= 50
    assert {t.level for t in TASKS} == {1, 2, 3}


def test_at_least_twenty_five_builtin_tasks_have_a_solution():
    assert sum(t.solution is not None for t in TASKS) >= 25


def test_level1_has_32_tasks_covering_every_operator_family():
    level1 = [t for t in TASKS if t.level == 1]
    assert len(level1) >= 32
    assert LEVEL1_FAMILIES <= {tag for t in level1 for tag in t.tags}
    assert sum(t.solution is not None for t in level1) >= 17


def test_builtin_task_ids_are_unique():
    ids = [t.id for t in TASKS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_task_has_small_and_full_presets_with_full_at_least_small(task):
    assert {"small", "full"} <= set(task.presets)
    small, full = task.presets["small"], task.presets["full"]
    assert set(small) == set(full)
    assert all(full[name] >= small[name] for name in small), (small, full)
    # `full` is the size written in the file, so running the task as written means running it full
    constants = integer_constants(task.source)
    assert all(constants[name] == value for name, value in full.items())


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_small_preset_builds_inputs_and_runs_the_reference_on_cpu(task, tmp_path):
    path = tmp_path / f"{task.name}_small.py"
    path.write_text(task.source_at("small"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs())
    inputs = module.get_inputs()
    assert all(x.device.type == "cpu" for x in inputs if isinstance(x, torch.Tensor))
    with torch.no_grad():
        out = model(*inputs)
    assert isinstance(out, torch.Tensor)
    if out.is_floating_point():
        assert torch.isfinite(out).all()


def _task_file(name: str, task_dict: str) -> str:
    return (
        f'"""{name}."""\n\nTASK = {task_dict}\n\nimport torch\nimport torch.nn as nn\n\nN = 64\n\n\n'
        "class Model(nn.Module):\n    def forward(self, x):\n        return x * 2\n\n\n"
        "def get_inputs():\n    return [torch.randn(N)]\n\n\n"
        "def get_init_inputs():\n    return []\n"
    )


def test_malformed_task_dict_is_reported_naming_the_file_while_others_load(tmp_path: Path):
    level = tmp_path / "level1"
    level.mkdir()
    good = '{"tags": ["elementwise"], "presets": {"small": {"N": 8}, "full": {"N": 64}}}'
    (level / "double.py").write_text(_task_file("double", good))
    (level / "broken.py").write_text(_task_file("broken", '{"tags": ["elementwise"], "presets": make_presets()}'))
    (level / "typo.py").write_text(_task_file("typo", '{"tagz": ["elementwise"]}'))
    tasks, errors = load_builtin(tmp_path)
    assert [t.id for t in tasks] == ["builtin/double"]
    assert sorted(Path(e.path).name for e in errors) == ["broken.py", "typo.py"]
    messages = {Path(e.path).name: str(e) for e in errors}
    assert "broken.py" in messages["broken.py"] and "literal" in messages["broken.py"]
    assert "tagz" in messages["typo.py"]


def test_builtin_dir_holds_one_folder_per_level():
    assert sorted(p.name for p in BUILTIN_DIR.glob("level*")) == ["level1", "level2", "level3"]


def test_no_builtin_task_lists_a_tag_twice():
    repeated = {t.id: t.tags for t in TASKS if len(t.tags) != len(set(t.tags))}
    assert repeated == {}


def test_a_task_file_listing_a_tag_twice_loads_it_once(tmp_path: Path):
    level = tmp_path / "level1"
    level.mkdir()
    (level / "twice.py").write_text(
        '"""Twice."""\nTASK = {"tags": ["softmax", "reduction", "softmax"]}\nimport torch\n'
        "class Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
        "def get_inputs():\n    return [torch.randn(4)]\n"
        "def get_init_inputs():\n    return []\n"
    )
    tasks, errors = load_builtin(tmp_path)
    assert errors == []
    assert tasks[0].tags == ["softmax", "reduction"]
