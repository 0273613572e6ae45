"""Fault injection: candidates that pass the static checks but hang, exhaust memory, recurse, flood
stdout or kill their worker each get their verdict class within the stage limit, and correct
neighbours in the same `evaluate_many` are unaffected. The candidates are the data files of
tests/adversarial/faults (shared with benchmarks/reliability_soak.py)."""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

import pytest

from atrl.harness.api import Harness
from atrl.harness.feedback.text import feedback_text
from atrl.harness.sandbox.worker import GIB, WorkerLimits
from atrl.harness.static.checks import check_static
from atrl.harness.verdict import CorrectnessStats, Verdict
from atrl.jsonio import to_jsonable
from atrl.tasks.registry import get_task

FAULTS_DIR = Path(__file__).resolve().parents[1] / "adversarial" / "faults"
STAGE_LIMIT_S = 15
_HEADER = re.compile(r"^#\s*(expect|class|task):\s*(.+?)\s*$", re.M)


def _faults() -> dict[str, tuple[str, str, str]]:
    out = {}
    for path in sorted(FAULTS_DIR.glob("*.py")):
        source = path.read_text()
        header = dict(_HEADER.findall(source))
        out[path.stem] = (header["task"], header["expect"], source)
    return out


FAULTS = _faults()


def test_every_fault_candidate_passes_the_static_checks():
    assert {"hang_python", "hang_kernel", "unbounded_allocation", "deep_recursion", "print_flood",
            "out_of_bounds_store"} <= set(FAULTS)
    for name, (_, _, source) in FAULTS.items():
        assert check_static(source) == [], name


@pytest.mark.parametrize("backend", [pytest.param("interpreter", marks=pytest.mark.slow),
                                     pytest.param("cuda", marks=pytest.mark.gpu)])
def test_each_fault_gets_its_class_in_time_and_neighbours_stay_correct(backend):
    relu = get_task("builtin/relu")
    names = list(FAULTS)
    pairs = [(relu, relu.solution)]
    for name in names:
        pairs += [(FAULTS[name][0], FAULTS[name][2]), (relu, f"# neighbour of {name}\n{relu.solution}")]
    with Harness(backend=backend, workers=2, trials=2, use_cache=False, limits=WorkerLimits(address_space=4 * GIB),
                 stage_timeouts={"compile": STAGE_LIMIT_S, "correctness": STAGE_LIMIT_S, "profile": STAGE_LIMIT_S}) as h:
        start = time.monotonic()
        verdicts = h.evaluate_many(pairs)
        elapsed = time.monotonic() - start
    assert len(verdicts) == len(pairs)
    neighbours = [verdicts[0]] + verdicts[2::2]
    assert all(v.ok for v in neighbours), [v.message for v in neighbours if not v.ok]
    got = {name: verdicts[1 + 2 * i] for i, name in enumerate(names)}
    assert {n: v.error_class or "ok" for n, v in got.items()} == {n: FAULTS[n][1] for n in names}
    for name, verdict in got.items():
        # each verdict came within its stage limits (plus the worker restart around it)
        # (waiting for the GPU while the other worker times a kernel is not part of a stage)
        charged = sum(t for stage, t in verdict.stage_seconds.items() if stage != "device_wait")
        assert charged < 2 * STAGE_LIMIT_S + 30, (name, verdict.stage_seconds)
    assert "RecursionError" in got["deep_recursion"].message
    # on the CPU the stray store hits unmapped memory; on a GPU it is an illegal address
    assert "killed by SIGSEGV" in got["out_of_bounds_store"].message or backend == "cuda"
    # the hangs run in parallel on two workers; everything else is quick
    assert elapsed < 4 * STAGE_LIMIT_S + 90


def test_nan_error_statistics_survive_the_worker_pipe_and_get_feedback():
    stats = CorrectnessStats(trials=1, max_abs_error=float("nan"), max_rel_error=float("inf"))
    sent = Verdict("builtin/relu", "h", "interpreter", "cpu", "correctness", False, "correctness:nan", correctness=stats)
    received = Verdict.from_dict(to_jsonable(sent))
    assert math.isnan(received.correctness.max_abs_error)
    assert received.correctness.max_rel_error == float("inf")
    assert "max abs nan" in feedback_text(received)
