"""The Ray harness on a real local Ray cluster (two judge actors, interpreter backend): the
verdicts of the in-process harness, nothing lost when an actor dies mid-run, one fleet shared by
two driver processes and their cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the Ray tests need the [ray] extra: pip install -e '.[ray]'")

from ray_runners import marked  # noqa: E402

from atrl.backends.ascend_env import SETUP_COMMAND, read_env  # noqa: E402
from atrl.harness.api import Harness  # noqa: E402
from atrl.harness.distributed.fleet import FleetOptions, stop_fleet  # noqa: E402
from atrl.harness.distributed.ray_harness import RayHarness  # noqa: E402
from atrl.tasks.registry import get_task  # noqa: E402

pytestmark = pytest.mark.ray

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
TIMEOUTS = {"compile": 30, "correctness": 30, "profile": 30}
# fields that say where or how fast a verdict was made, not what it is
PLACE_AND_TIME = ("stage_seconds", "cached")


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=4, log_to_driver=False, include_dashboard=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="module")
def judges(cluster):
    """Fleet `judges`: two actors of one interpreter worker each, running the real judge."""
    fleet = FleetOptions(name="judges", actors=2)
    harness = RayHarness(backend="interpreter", workers=1, use_cache=False, stage_timeouts=TIMEOUTS, fleet=fleet)
    yield harness
    harness.close()
    stop_fleet(fleet)


def _candidates() -> list[tuple[str, str]]:
    relu, add = get_task("builtin/relu"), get_task("builtin/add")
    wrong = relu.solution.replace("0.0", "1.0")
    assert wrong != relu.solution
    return [
        (relu.id, relu.solution),
        (relu.id, wrong),  # correctness:mismatch
        (relu.id, relu.solution.replace("tl.store", "tl.stor")),  # fails in the worker: compile:triton
        (relu.id, "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                  "        return torch.relu(x)\n"),  # static: no Triton kernel, decided on the driver
        (relu.id, "I cannot write this kernel."),  # format: no code
        (add.id, add.solution),
        (relu.id, relu.solution),  # the same candidate again: one job, two verdicts
    ]


def _comparable(verdict) -> dict:
    record = {k: v for k, v in verdict.__dict__.items() if k not in PLACE_AND_TIME}
    # the correctness counts and errors; its seconds by part are a place-and-time fact
    record["correctness"] = ({k: v for k, v in verdict.correctness.__dict__.items() if k != "seconds"}
                             if verdict.correctness else None)
    # the task's memory plan is part of the verdict; the worker's measured use is a place-and-time fact
    record["memory"] = {k: v for k, v in (verdict.memory or {}).items() if k not in ("enforced_bytes", "peak_bytes")}
    return record


def test_ray_verdicts_equal_the_in_process_harness(judges):
    candidates = _candidates()
    with Harness(backend="interpreter", workers=2, use_cache=False, stage_timeouts=TIMEOUTS) as local:
        expected = local.evaluate_many(candidates)
    progress = []
    got = judges.evaluate_many(candidates, progress=lambda done, total, v: progress.append((done, total)))
    assert [_comparable(v) for v in got] == [_comparable(v) for v in expected]
    assert [v.error_class for v in got][:5] == [None, "correctness:mismatch", "compile:triton",
                                                 "static:no-triton-kernel", "format:no-code"]
    assert progress[-1] == (len(candidates), len(candidates))
    assert got[6] is not got[0]  # the repeated candidate: its own verdict object
    # only the four distinct candidates that must run crossed to the fleet; both actors took some
    assert judges.stats.judged == 4 and judges.stats.joined == 1
    assert sorted(judges.stats.per_member) == [0, 1]


def _sleeping_fleet(name: str) -> tuple[FleetOptions, RayHarness]:
    """Two one-worker actors whose runner sleeps as each candidate's mark says (`ray_runners`)."""
    fleet = FleetOptions(name=name, actors=2)
    return fleet, RayHarness(backend="interpreter", workers=1, use_cache=False, fleet=fleet,
                             runner="ray_runners:run", runner_sys_path=(str(HERE),))


def test_an_actor_killed_mid_run_loses_no_verdict(cluster):
    relu = get_task("builtin/relu")
    fleet, harness = _sleeping_fleet("doomed")
    try:
        pids = {m.pid for m in harness.fleet.members}
        futures = [harness.submit(relu, marked(relu.solution, 0.4, i)) for i in range(8)]
        futures[0].result(timeout=60)
        busy = next(m for m in harness._dispatcher.members if m.in_flight > 0)
        ray.kill(busy.handle, no_restart=False)  # a crash: Ray restarts the actor
        verdicts = [f.result(timeout=120) for f in futures]
        assert [v.message.split()[0] for v in verdicts] == [f"id={i}" for i in range(8)]
        assert all(v.ok for v in verdicts)
        assert harness.stats.resent >= 1
        assert harness.stats.judged == 8  # each job answered once, the re-sent ones included
        judged_by = {int(v.message.split("pid=")[1]) for v in verdicts}
        assert judged_by <= pids | {m.pid for m in _members(fleet)}
        deadline = time.monotonic() + 60
        while busy.state != "up" and time.monotonic() < deadline:  # Ray restarted it: back in service
            time.sleep(0.1)
        assert busy.state == "up"
    finally:
        harness.close()
        stop_fleet(fleet)


def test_a_worker_killed_with_its_actor_is_no_verdict_on_the_candidate(cluster):
    # Ray kills an actor's child processes first, then the actor: in between, the actor's pool sees
    # its worker die and would answer "crash" for a candidate that did nothing wrong. Here the same
    # order by hand, with time for such an answer to land before the actor goes.
    import signal

    import psutil

    relu = get_task("builtin/relu")
    fleet, harness = _sleeping_fleet("racing")
    try:
        futures = [harness.submit(relu, marked(relu.solution, 8.0, i)) for i in range(2)]
        deadline = time.monotonic() + 60
        while not all(m.in_flight for m in harness._dispatcher.members) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(4.0)  # both workers started and inside their job
        busy = harness._dispatcher.members[0]
        workers = psutil.Process(harness.fleet.members[busy.index].pid).children(recursive=True)
        assert workers, "the actor's worker process was not found"
        for worker in workers:
            worker.send_signal(signal.SIGKILL)
        time.sleep(0.5)
        ray.kill(busy.handle, no_restart=False)
        verdicts = [f.result(timeout=120) for f in futures]
        assert [v.message.split()[0] for v in verdicts] == ["id=0", "id=1"], [v.message for v in verdicts]
        assert all(v.ok for v in verdicts) and harness.stats.resent >= 1
    finally:
        harness.close()
        stop_fleet(fleet)


def _members(fleet: FleetOptions):
    from atrl.harness.distributed.fleet import fleet_status

    return fleet_status(fleet)


DRIVER = """
import json, sys
import ray
from atrl.harness.distributed.fleet import FleetOptions
from atrl.harness.distributed.ray_harness import RayHarness
ray.init(address=sys.argv[1], log_to_driver=False)
pairs = json.loads(sys.argv[2])
out = {}
for phase, use_cache in (("fleet", False), ("cache", True)):
    with RayHarness(backend="interpreter", use_cache=use_cache, cache_dir=sys.argv[3],
                    fleet=FleetOptions(name="judges")) as harness:
        verdicts = harness.evaluate_many([tuple(p) for p in pairs])
        out[phase] = {"pids": sorted(m.pid for m in harness.fleet.members), "judged": harness.stats.judged,
                      "verdicts": [(v.stage, v.ok, v.error_class, v.score, v.cached) for v in verdicts]}
# a fleet this driver creates and leaves behind when it exits: detached, it stays for others
out["left_behind"] = RayHarness(backend="interpreter", workers=1,
                                fleet=FleetOptions(name="left-behind", actors=1)).fleet.members[0].pid
print("RESULT " + json.dumps(out))
"""


def test_two_drivers_share_one_fleet_and_a_cache_directory(judges, cluster, tmp_path):
    relu = get_task("builtin/relu")
    pairs = [(relu.id, relu.solution), (relu.id, relu.solution.replace("0.0", "1.0"))]
    with RayHarness(backend="interpreter", use_cache=True, cache_dir=tmp_path, fleet=FleetOptions(name="judges")) as mine:
        expected = [(v.stage, v.ok, v.error_class, v.score) for v in mine.evaluate_many(pairs)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", DRIVER, cluster, json.dumps(pairs), str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    other = json.loads(done.stdout.split("RESULT ", 1)[1])
    assert time.monotonic() - start < 240
    # the other driver found this fleet (no new actor) and judged through it
    assert other["fleet"]["pids"] == sorted(m.pid for m in judges.fleet.members)
    assert other["fleet"]["judged"] == len(pairs)
    assert [tuple(v[:4]) for v in other["fleet"]["verdicts"]] == expected
    # with the shared cache directory nothing crossed to the fleet: every verdict was cached
    assert other["cache"]["judged"] == 0
    assert [tuple(v) for v in other["cache"]["verdicts"]] == [(*e, True) for e in expected]
    # the fleet the other driver started outlived it
    left_behind = FleetOptions(name="left-behind")
    assert [m.pid for m in _members(left_behind)] == [other["left_behind"]]
    stop_fleet(left_behind)


def test_atrl_eval_with_harness_ray_judges_on_the_fleet(judges, tmp_path):
    from atrl.eval.config import EvalConfig
    from atrl.eval.runner import run_eval

    judged_before = {m.pid: m.jobs_started for m in _members(FleetOptions(name="judges"))}
    config = EvalConfig(policy="reference", tasks=["relu", "add"], max_turns=1, backend="interpreter", trials=2,
                        kb=False, use_cache=False, harness="ray", fleet="judges", max_response_tokens=4096,
                        context_budget=16384)
    run_eval(config, tmp_path)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["best_of_turns"]["correctness"] == 1.0 and metrics["backends"] == ["interpreter"]
    judged_after = {m.pid: m.jobs_started for m in _members(FleetOptions(name="judges"))}
    assert sum(judged_after.values()) - sum(judged_before.values()) == 2


def test_training_rewards_come_from_the_fleet_named_in_the_config(judges):
    from atrl.rl.config import make_config
    from atrl.rl.trainer import _make_reward_source

    config = make_config({"harness": "ray", "harness_fleet": "judges", "backend": "interpreter"})
    source = _make_reward_source(config)
    try:
        assert isinstance(source, RayHarness)
        assert [m.pid for m in source.fleet.members] == [m.pid for m in judges.fleet.members]
    finally:
        source.close()


def test_atrl_fleet_status_lists_the_actors_and_stop_removes_them(cluster, capsys, monkeypatch):
    from atrl.cli import main

    monkeypatch.setenv("COLUMNS", "200")  # the table on one line per actor
    harness = RayHarness(backend="interpreter", workers=1, fleet=FleetOptions(name="listed", actors=1))
    harness.close()
    assert main(["fleet", "status", "--fleet", "listed"]) == 0
    out = capsys.readouterr().out
    assert "fleet listed" in out and str(harness.fleet.members[0].pid) in out and "interpreter" in out
    assert main(["fleet", "stop", "--fleet", "listed"]) == 0
    assert "stopped 1 actor(s)" in capsys.readouterr().out
    assert _members(FleetOptions(name="listed")) == []


@pytest.mark.skipif(read_env() is None, reason=f"the triton-ascend environment is absent: run `{SETUP_COMMAND}`")
def test_an_ascend_fleet_judges_as_the_in_process_ascend_harness(cluster):
    """Without NPUs an ascend actor is a CPU worker group: its workers lower each kernel for the
    NPU and interpret it, as the in-process harness's do."""
    relu = get_task("builtin/relu")
    candidates = [(relu.id, relu.solution), (relu.id, relu.solution.replace("0.0", "1.0"))]
    options = {"workers": 1, "trials": 2, "use_cache": False, "stage_timeouts": TIMEOUTS}
    with Harness(backend="ascend", **options) as local:
        expected = local.evaluate_many(candidates)
    fleet = FleetOptions(name="ascend-judges", actors=1)
    harness = RayHarness(backend="ascend", fleet=fleet, **options)
    try:
        got = harness.evaluate_many(candidates)
        assert harness.fleet.members[0].backend == "ascend" and harness.fleet.backend.label == "ascend:lowering"
    finally:
        harness.close()
        stop_fleet(fleet)
    assert [_comparable(v) for v in got] == [_comparable(v) for v in expected]
    assert [v.error_class for v in got] == [None, "correctness:mismatch"]
    assert any(flag.startswith("ascend: lowered to linalg") for flag in got[0].flags)
