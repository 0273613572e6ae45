"""The work bound of the KernelBench `small` preset: constants are halved further while the
reference forward's FLOPs (measured on the meta device) exceed `SMALL_MAX_FLOPS`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from atrl.tasks import reference_flops
from atrl.tasks.kernelbench import SMALL_MAX_DIM, SMALL_MAX_FLOPS, load_kernelbench, preset_for_source
from atrl.tasks.reference_flops import forward_flops

# Inputs 16*32*32*32 = 524288 elements: within the element budget (16 * 256**2), so the input
# bound leaves it alone; FLOPs 2 * 16 * 64 * 30*30 * 32 * 3*3 = 530.8 MFLOP, 8x the work bound.
CONV = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x):
        return torch.relu(self.conv(x)) + self.bias

batch_size = 16
in_channels = 32
out_channels = 64
height = width = 32
kernel_size = 3

def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
'''


def conv_flops(batch: int, cin: int = 32, cout: int = 64, size: int = 32, k: int = 3) -> int:
    out = size - k + 1
    return 2 * batch * cout * out * out * cin * k * k


ELEMENTWISE = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x) * x

batch_size = 16
dim = 4096

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []
'''

# 2 * 256**3 = 33.5 MFLOP: within the bound.
MATMUL = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)

N = 256

def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]

def get_init_inputs():
    return []
'''

# The same convolution, each forward doing something the meta device cannot: a data-dependent
# Python number, a data-dependent shape, or a missing import.
NOT_ON_META = {
    "item": CONV.replace("return torch.relu(self.conv(x)) + self.bias",
                         "return torch.relu(self.conv(x)) * x.mean().item()"),
    "tolist": CONV.replace("return torch.relu(self.conv(x)) + self.bias",
                           "return self.conv(x)[:, : int(x.sum().tolist())]"),
    "nonzero": CONV.replace("return torch.relu(self.conv(x)) + self.bias",
                            "return self.conv(x)[torch.nonzero(x > 0.5, as_tuple=True)[0]]"),
    "import": CONV.replace("import torch.nn as nn", "import torch.nn as nn\nimport no_such_module_atrl"),
}


@pytest.fixture(autouse=True)
def fresh_flop_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Each test measures for itself: an empty on-disk cache and no in-process results."""
    monkeypatch.setenv("ATRL_FLOPS_CACHE_DIR", str(tmp_path / "flops"))
    reference_flops._cached_flops.cache_clear()
    yield
    reference_flops._cached_flops.cache_clear()


def src(text: str) -> str:
    return textwrap.dedent(text)


def test_flops_are_counted_on_meta_as_the_convolution_formula_says() -> None:
    assert forward_flops(src(CONV)) == conv_flops(16)
    assert forward_flops(src(CONV), {"batch_size": 4}) == conv_flops(4)
    assert forward_flops(src(MATMUL)) == 2 * 256**3
    assert forward_flops(src(ELEMENTWISE)) == 0  # the counter counts matrix products and convolutions only


def test_a_convolution_within_the_element_budget_is_halved_until_its_flops_fit() -> None:
    source = src(CONV)
    assert preset_for_source(source, SMALL_MAX_DIM) == {}  # the input bound alone: nothing to do
    preset = preset_for_source(source, SMALL_MAX_DIM, max_flops=SMALL_MAX_FLOPS)
    # the batch is halved first (16 -> 8 -> 4 -> 2): 530.8 -> 66.4 MFLOP
    assert preset == {"batch_size": 2}
    assert forward_flops(source, preset) == conv_flops(2) <= SMALL_MAX_FLOPS
    # ... and no further than needed: one halving fewer is still over the bound
    assert forward_flops(source, {"batch_size": 4}) > SMALL_MAX_FLOPS


def test_after_the_batch_the_largest_constants_are_halved_equal_ones_together() -> None:
    source = src(CONV)
    preset = preset_for_source(source, SMALL_MAX_DIM, max_flops=SMALL_MAX_FLOPS // 8)
    # batch at its floor (2), then in_channels and height (both 32; width follows height) halve together
    assert preset == {"batch_size": 2, "in_channels": 16, "height": 16}
    flops = forward_flops(source, preset)
    assert flops is not None and flops <= SMALL_MAX_FLOPS // 8 < forward_flops(source, {"batch_size": 2})


def test_work_within_the_bound_is_unchanged() -> None:
    elementwise, matmul = src(ELEMENTWISE), src(MATMUL)
    assert preset_for_source(elementwise, SMALL_MAX_DIM) == {"dim": 256}  # the cap; 16 * 256 elements
    assert preset_for_source(elementwise, SMALL_MAX_DIM, max_flops=SMALL_MAX_FLOPS) == {"dim": 256}
    assert preset_for_source(matmul, SMALL_MAX_DIM, max_flops=SMALL_MAX_FLOPS) == {}
    # elementwise work counts 0 FLOPs: no bound shrinks it
    assert preset_for_source(elementwise, SMALL_MAX_DIM, max_flops=1) == {"dim": 256}


@pytest.mark.parametrize("kind", sorted(NOT_ON_META))
def test_a_forward_that_fails_on_meta_keeps_the_input_only_preset(kind: str) -> None:
    source = src(NOT_ON_META[kind])
    assert forward_flops(source) is None
    assert preset_for_source(source, SMALL_MAX_DIM, max_flops=SMALL_MAX_FLOPS) == preset_for_source(
        source, SMALL_MAX_DIM) == {}
    # the same when the input bound already shrank it
    assert preset_for_source(source, SMALL_MAX_DIM, max_elements=1 << 16, max_flops=1) == preset_for_source(
        source, SMALL_MAX_DIM, max_elements=1 << 16) == {"batch_size": 2}


def test_the_model_is_measured_in_its_default_training_mode() -> None:
    source = src(CONV.replace("return torch.relu(self.conv(x)) + self.bias",
                              "return self.conv(x) if self.training else x"))
    assert forward_flops(source) == conv_flops(16)


def test_measuring_leaves_the_process_rng_and_output_alone(capsys: pytest.CaptureFixture[str]) -> None:
    source = src(CONV.replace("batch_size = 16", "torch.manual_seed(123)\nprint('hello')\nbatch_size = 16"))
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    assert forward_flops(source) == conv_flops(16)
    assert torch.equal(torch.rand(3), expected)
    assert "hello" not in capsys.readouterr().out


def test_measurements_are_kept_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = src(CONV)
    assert forward_flops(source) == conv_flops(16)
    assert len(list((tmp_path / "flops").glob("*.json"))) == 1
    reference_flops._cached_flops.cache_clear()

    def fail(*_):
        raise AssertionError("measured again")

    monkeypatch.setattr(reference_flops, "_measure_flops", fail)
    assert forward_flops(source) == conv_flops(16)  # read back, not measured
    with pytest.raises(AssertionError, match="measured again"):
        forward_flops(source, {"batch_size": 8})  # other values: another record


def test_loaded_level1_and_level2_tasks_get_the_work_bound_level3_does_not(tmp_path: Path) -> None:
    for rel in ("level1/1_Conv.py", "level2/1_Conv_ReLU_BiasAdd.py", "level3/1_ConvNet.py"):
        path = tmp_path / "kb" / "KernelBench" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(src(CONV))
    tasks = {t.level: t for t in load_kernelbench(tmp_path / "kb")[0]}
    assert tasks[1].presets["small"] == tasks[2].presets["small"] == {"batch_size": 2}
    assert tasks[3].presets["small"] == {}


def test_an_unreadable_or_odd_cache_record_is_measured_again(tmp_path: Path) -> None:
    source = src(CONV)
    assert forward_flops(source) == conv_flops(16)
    [record] = (tmp_path / "flops").glob("*.json")
    for text in ("{not json", '{"flops": "many"}', "[]"):
        record.write_text(text)
        reference_flops._cached_flops.cache_clear()
        assert forward_flops(source) == conv_flops(16)
