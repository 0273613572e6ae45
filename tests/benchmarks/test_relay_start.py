import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from relay_start import choose, measured_checkpoints  # noqa: E402


def _sft(tmp_path: Path, rates: dict[int, float]) -> Path:
    for step, rate in rates.items():
        folder = tmp_path / "checkpoints" / f"step_{step:06d}"
        folder.mkdir(parents=True)
        (folder / "relay.json").write_text(json.dumps({"key_relay_rate": rate}))
    return tmp_path


def test_the_first_checkpoint_in_step_order_inside_the_band_is_chosen(tmp_path):
    sft = _sft(tmp_path, {12: 0.30, 3: 0.05, 6: 0.41, 9: 0.91})
    assert [step for step, _, _ in measured_checkpoints(sft)] == [3, 6, 9, 12]
    assert choose(measured_checkpoints(sft)).name == "step_000006"


def test_the_band_is_inclusive_and_none_inside_it_chooses_nothing(tmp_path):
    assert choose([(3, Path("a"), 0.5)]) == Path("a")
    assert choose([(3, Path("a"), 0.1)]) == Path("a")
    assert choose([(3, Path("a"), 0.0), (6, Path("b"), 0.91)]) is None


@pytest.mark.parametrize("rates, chosen", [
    ({2: 0.20, 3: 0.40, 6: 0.90}, "step_000003"),  # every third step first: step 2 is not looked at
    ({1: 0.05, 2: 0.30, 3: 0.60, 6: 0.90, 9: 0.95}, "step_000002"),  # above at step 3: back toward the band
    ({1: 0.20, 2: 0.60, 3: 0.70, 6: 0.90}, "step_000001"),  # the latest earlier one inside it
    ({1: 0.30, 3: 0.05, 6: 0.08, 9: 0.09}, None),  # below at every third step: fewer steps move away
    ({1: 0.05, 2: 0.07, 3: 0.60}, None),
])
def test_when_no_third_step_lies_in_the_band_the_step_count_moves_toward_it(tmp_path, rates, chosen):
    found = choose(measured_checkpoints(_sft(tmp_path, rates)))
    assert (found.name if found else None) == chosen


@pytest.mark.parametrize("rates, status, says", [
    ({3: 0.41, 6: 0.91}, 0, "step_000003/model"),
    ({3: 0.0, 6: 0.91}, 1, "no checkpoint's relay rate lies in 10%-50%"),
    ({}, 1, "run `scripts/experiment_credit.sh relay-start` first"),
])
def test_the_command_prints_the_start_or_says_why_there_is_none(tmp_path, rates, status, says):
    sft = _sft(tmp_path, rates)
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "relay_start.py"), "--sft", str(sft)],
                          capture_output=True, text=True)
    assert done.returncode == status
    assert says in done.stdout + done.stderr
    if rates:
        assert json.loads((sft / "choice.json").read_text())["rates"]["step_000006"] == 0.91
