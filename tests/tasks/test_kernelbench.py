"""The KernelBench loader: static parsing, tags and flags, load errors, and the small preset."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from atrl.tasks.kernelbench import capped, kernelbench_preset, load_kernelbench, preset_for_source
from atrl.tasks.registry import get_task, load_suite

RELU = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    """Applies ReLU.

    More words."""
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)

batch_size = 4096
dim = 393216

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []
'''

MATMUL = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)

M = 1024 * 4
N = 2 * M
K = 4096

def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]

def get_init_inputs():
    return []
'''

DROPOUT = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.drop = nn.Dropout(p)
        self.keep = nn.Dropout(0.0)

    def forward(self, x):
        return self.drop(x).sum(dim=1)

batch_size = 8
features = 64

def get_inputs():
    return [torch.rand(batch_size, features)]

def get_init_inputs():
    return [0.5]
'''

CONV3D = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv3d(cin, cout, k)
        self.bn = nn.BatchNorm3d(cout)

    def forward(self, x):
        return self.bn(self.conv(x))

batch_size = 16
in_channels, out_channels = 3, 8
depth = height = width = 64
kernel_size = 3

def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
'''

LOSS = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))

batch_size = 32768
input_shape = (32768,)

def get_inputs():
    return [torch.rand(batch_size, *input_shape), torch.randint(0, 2, (batch_size,)).float() * 2 - 1]

def get_init_inputs():
    return []
'''

HUB = '''
import torch
from transformers import AutoModelForCausalLM, AutoConfig

class Model(torch.nn.Module):
    def __init__(self, model_name, config):
        super().__init__()
        self.model = AutoModelForCausalLM.from_pretrained(model_name, config=config)

    def forward(self, x):
        return self.model(x).logits

model_name = "gpt2"
config = AutoConfig.from_pretrained(model_name)
batch_size = 32

def get_inputs():
    return [torch.randint(0, 100, (batch_size, 256))]

def get_init_inputs():
    return [model_name, config]
'''

BROKEN = "import torch\n\nclass Model(torch.nn.Module:\n    pass\n"
NO_INPUTS = "import torch\n\nclass Model(torch.nn.Module):\n    pass\n\ndef get_init_inputs():\n    return []\n"


def write_tree(root: Path) -> Path:
    """A KernelBench-shaped checkout: root/KernelBench/level<L>/<id>_<Name>.py."""
    files = {
        "level1/19_ReLU.py": RELU,
        "level1/2_Standard_matrix_multiplication_.py": MATMUL,
        "level1/100_HingeLoss.py": LOSS,
        "level1/7_Broken.py": BROKEN,
        "level2/3_Matmul_Dropout_Sum.py": DROPOUT,
        "level2/5_Conv3d_BatchNorm.py": CONV3D,
        "level3/1_NoInputs.py": NO_INPUTS,
        "level4/1_gpt2_bs32_seq256.py": HUB,
    }
    for rel, text in files.items():
        path = root / "KernelBench" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "kb")


def by_name(tasks):
    return {t.name: t for t in tasks}


def test_malformed_files_are_reported_by_name_while_the_rest_load(tree: Path) -> None:
    tasks, errors = load_kernelbench(tree)
    assert sorted(t.name for t in tasks) == sorted(
        ["19_ReLU", "2_Standard_matrix_multiplication_", "100_HingeLoss", "3_Matmul_Dropout_Sum",
         "5_Conv3d_BatchNorm", "1_gpt2_bs32_seq256"])
    messages = sorted(str(e) for e in errors)
    assert len(messages) == 2
    assert "7_Broken.py" in messages[0] and "syntax error on line 3" in messages[0]
    assert "1_NoInputs.py" in messages[1] and "does not define get_inputs" in messages[1]


def test_accepts_repo_root_or_its_kernelbench_folder_and_orders_by_level_then_id(tree: Path) -> None:
    from_root, _ = load_kernelbench(tree)
    from_inner, _ = load_kernelbench(tree / "KernelBench")
    assert [t.id for t in from_root] == [t.id for t in from_inner]
    assert [t.id for t in from_root][:3] == [
        "kernelbench/level1/2_Standard_matrix_multiplication_",
        "kernelbench/level1/19_ReLU",
        "kernelbench/level1/100_HingeLoss",
    ]


def test_metadata_is_parsed_statically(tree: Path) -> None:
    tasks = by_name(load_kernelbench(tree)[0])
    relu = tasks["19_ReLU"]
    assert relu.level == 1 and relu.compute_policy == "strict" and not relu.multi_case
    assert tasks["5_Conv3d_BatchNorm"].level == 2 and tasks["5_Conv3d_BatchNorm"].compute_policy == "partial"
    assert relu.description == "Applies ReLU."
    assert relu.tags == ["activation"]
    assert tasks["2_Standard_matrix_multiplication_"].tags == ["matmul"]
    assert tasks["2_Standard_matrix_multiplication_"].description == "Standard matrix multiplication"
    assert set(tasks["5_Conv3d_BatchNorm"].tags) == {"conv", "norm"}
    assert "loss" in tasks["100_HingeLoss"].tags
    assert relu.presets["full"] == {}


def test_dropout_and_training_batchnorm_are_flagged_nondeterministic(tree: Path) -> None:
    tasks = by_name(load_kernelbench(tree)[0])
    dropout = tasks["3_Matmul_Dropout_Sum"].flags["nondeterministic"]
    assert "Dropout" in dropout and dropout.count("Dropout") == 1  # Dropout(0.0) is not counted
    assert "BatchNorm3d" in tasks["5_Conv3d_BatchNorm"].flags["nondeterministic"]
    assert "nondeterministic" not in tasks["19_ReLU"].flags


def test_conv3d_is_flagged_slow_and_level4_skipped_with_a_reason(tree: Path) -> None:
    tasks = by_name(load_kernelbench(tree)[0])
    assert "slow-on-cpu" in tasks["5_Conv3d_BatchNorm"].flags
    hub = tasks["1_gpt2_bs32_seq256"]
    assert hub.skipped and "model hub" in hub.flags["skipped"] and "needs-hub" in hub.flags
    assert "small" not in hub.presets
    assert not tasks["19_ReLU"].skipped


def test_small_preset_caps_constants_and_leaves_small_ones(tree: Path) -> None:
    tasks = by_name(load_kernelbench(tree)[0])
    # 393216 = 3 * 2**17: the odd factor 3 is kept (channels stay divisible by groups=3)
    assert tasks["19_ReLU"].presets["small"] == {"batch_size": 256, "dim": 192}
    # derived N is not a literal: it follows M
    assert tasks["2_Standard_matrix_multiplication_"].presets["small"] == {"M": 256, "K": 256}
    conv = tasks["5_Conv3d_BatchNorm"].presets["small"]
    assert "in_channels" not in conv and "kernel_size" not in conv
    assert conv["batch_size"] < 16 and conv["depth"] < 64


def run_source(source: str) -> list[list[int]]:
    """Execute a task module (our own test files) in a subprocess; return its input and output shapes."""
    script = source + textwrap.dedent('''
        import json as _json
        _inputs = get_inputs()
        _out = Model(*get_init_inputs())(*_inputs)
        print(_json.dumps([list(t.shape) for t in _inputs] + [list(_out.shape)]))
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return __import__("json").loads(done.stdout.strip().splitlines()[-1])


def test_capped_sources_run_with_derived_and_equal_constants_consistent(tree: Path) -> None:
    tasks = by_name(load_kernelbench(tree)[0])
    matmul = tasks["2_Standard_matrix_multiplication_"]
    assert run_source(matmul.source_at("small")) == [[256, 256], [256, 512], [256, 512]]
    hinge = tasks["100_HingeLoss"]
    assert hinge.presets["small"] == {"batch_size": 256, "input_shape[0]": 256}
    assert run_source(hinge.source_at("small")) == [[256, 256], [256], []]
    conv_shapes = run_source(tasks["5_Conv3d_BatchNorm"].source_at("small"))
    assert conv_shapes[0][0] >= 2 and conv_shapes[0][2] >= 16


def test_preset_with_any_cap_and_element_budget(tree: Path) -> None:
    relu = by_name(load_kernelbench(tree)[0])["19_ReLU"]
    assert kernelbench_preset(relu, 1024, max_elements=1 << 30) == {"batch_size": 1024, "dim": 768}
    # equal sizes shrink together
    square = RELU.replace("dim = 393216", "dim = 4096")
    assert preset_for_source(square, 1024, max_elements=32 * 32) == {"batch_size": 32, "dim": 32}
    # a tight budget halves the batch first (down to 2), then the largest size
    unequal = RELU.replace("batch_size = 4096", "batch_size = 64").replace("dim = 393216", "dim = 1024")
    assert preset_for_source(unequal, 4096, max_elements=2 * 1024) == {"batch_size": 2}
    assert preset_for_source(unequal, 4096, max_elements=1024) == {"batch_size": 2, "dim": 512}
    assert preset_for_source("x = 3\n", 256) == {}


def test_registry_finds_kernelbench_tasks_by_id(tree: Path) -> None:
    loaded = load_suite("kernelbench", tree, level=2)
    assert [t.level for t in loaded.tasks] == [2, 2]
    task = get_task("kernelbench/level1/19_ReLU", tree)
    assert task.path is not None and task.path.endswith("19_ReLU.py")


def test_capping_keeps_small_odd_factors_so_group_divisibility_survives() -> None:
    assert capped(480, 256) % 3 == 0 and capped(480, 256) <= 256
    assert capped(4096, 256) == 256
    assert capped(1000, 256) % 5 == 0
    assert capped(1000, 4) == 4  # the odd part does not fit: plain cap
