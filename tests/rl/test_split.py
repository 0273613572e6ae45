"""The train / held-out split: the shipped file is valid and large enough; bad splits are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from atrl.errors import UsageError
from atrl.rl.split import load_split, main, operators, parse_split, tasks_for, validate_split
from atrl.tasks.registry import load_suite
from atrl.tasks.task import Task

SPLIT_FILE = Path(__file__).resolve().parents[2] / "configs" / "split-builtin.yaml"


@pytest.fixture(scope="module")
def builtin_tasks() -> list[Task]:
    return load_suite("builtin").tasks


def _task(name: str, tags: list[str]) -> Task:
    return Task(id=f"builtin/{name}", suite="builtin", name=name, level=1, source="", tags=tags)


SMALL_SUITE = [
    _task("relu", ["elementwise", "activation", "relu"]),
    _task("sigmoid", ["elementwise", "activation", "sigmoid"]),
    _task("softmax", ["softmax", "softmax"]),
    _task("clamp", ["elementwise", "clamp"]),
    _task("gelu_scale_clamp", ["fusion", "activation", "gelu", "scale", "clamp"]),
    _task("matmul_bias_relu", ["fusion", "matmul", "linear", "relu"]),
    _task("linear", ["matmul", "linear"]),
]


def test_shipped_split_validates_with_enough_tasks_in_each_part(builtin_tasks: list[Task]) -> None:
    split = load_split(SPLIT_FILE, builtin_tasks)
    by_id = {t.id: t for t in builtin_tasks}
    train_with_solution = [i for i in split.train if by_id[i].solution is not None]
    assert len(train_with_solution) == len(split.train) >= 20
    assert len(split.heldout) >= 10
    assert not set(split.train) & set(split.heldout)
    assert set(split.train) | set(split.heldout) | set(split.excluded) == set(by_id)


def test_shipped_split_holds_out_no_training_operator(builtin_tasks: list[Task]) -> None:
    by_id = {t.id: t for t in builtin_tasks}
    split = load_split(SPLIT_FILE, builtin_tasks)
    train_ops = [operators(by_id[i]) for i in split.train]
    for task_id in split.heldout:
        assert not any(operators(by_id[task_id]) <= ops for ops in train_ops), task_id


def test_task_in_both_parts_is_refused() -> None:
    with pytest.raises(UsageError, match="builtin/relu is listed in both train and heldout"):
        parse_split({"train": ["relu"], "heldout": ["builtin/relu"]})


def test_unknown_task_id_is_refused_with_a_close_match() -> None:
    split = parse_split({"train": ["relu"], "heldout": ["sigmod"]})
    with pytest.raises(UsageError, match="unknown task builtin/sigmod.*builtin/sigmoid"):
        validate_split(split, SMALL_SUITE)


def test_heldout_operator_at_another_size_is_refused() -> None:
    twin = _task("relu_large", ["elementwise", "activation", "relu"])
    split = parse_split({"train": ["relu"], "heldout": ["relu_large"]})
    with pytest.raises(
        UsageError, match="held-out task builtin/relu_large has operator.* relu .*builtin/relu "
    ):
        validate_split(split, [*SMALL_SUITE, twin])


def test_heldout_operator_inside_a_training_fusion_is_refused() -> None:
    split = parse_split({"train": ["gelu_scale_clamp"], "heldout": ["clamp"]})
    with pytest.raises(UsageError, match="builtin/clamp .*builtin/gelu_scale_clamp"):
        validate_split(split, SMALL_SUITE)


def test_heldout_fusion_of_trained_operators_is_allowed() -> None:
    split = parse_split({"train": ["relu", "linear"], "heldout": ["matmul_bias_relu", "sigmoid"]})
    validate_split(split, SMALL_SUITE)


def test_family_only_tags_fall_back_to_the_task_name() -> None:
    assert operators(_task("softmax", ["softmax", "softmax"])) == {"softmax"}
    assert operators(_task("odd", ["reduction"])) == {"odd"}


def test_tasks_for_returns_the_part_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "split.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "suite": "builtin",
                "train": ["softmax", "relu"],
                "heldout": ["sigmoid"],
                "excluded": {"clamp": "not used"},
            }
        )
    )
    assert [t.id for t in tasks_for(path, "train", SMALL_SUITE)] == ["builtin/softmax", "builtin/relu"]
    assert [t.id for t in tasks_for(path, "heldout", SMALL_SUITE)] == ["builtin/sigmoid"]
    with pytest.raises(UsageError, match="unknown split part"):
        tasks_for(path, "test", SMALL_SUITE)


def test_unknown_keys_and_missing_file_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown key"):
        parse_split({"train": ["relu"], "heldout": ["sigmoid"], "test": []})
    with pytest.raises(UsageError, match="does not exist"):
        load_split(tmp_path / "absent.yaml")


def test_module_entry_prints_the_heldout_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(SPLIT_FILE), "heldout"]) == 0
    printed = capsys.readouterr().out.strip().split(",")
    assert "builtin/sigmoid" in printed and "builtin/relu" not in printed
