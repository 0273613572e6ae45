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
