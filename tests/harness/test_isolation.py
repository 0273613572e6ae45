"""Worker isolation: a scrubbed environment, a private working directory, resource limits, and no
network where the OS allows a new network namespace (Linux, root).

The network measure is probed from inside a worker by a harness-internal runner (`probe` below,
loaded by the worker through `runner=`), because the static rules reject a candidate's socket use
before it could ever run; the static rejection itself is asserted too.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from atrl.harness.sandbox.pool import WorkerPool
from atrl.harness.sandbox.worker import isolate_network
from atrl.harness.static.checks import check_static
from atrl.harness.verdict import Verdict, candidate_hash
from atrl.tasks.task import Task

HERE = str(Path(__file__).resolve().parent)
TASK = Task(id="test/isolation", suite="test", name="isolation", level=1, source="")


def probe(task, code, options, report_stage, timing_lock) -> Verdict:
    """Runs in the worker: the facts the parent asked for in `code`, as JSON in the message."""
    request = json.loads(code)
    facts: dict = {"cwd": os.getcwd(), "env": dict(os.environ)}
    if "connect" in request:
        try:
            with socket.create_connection(("127.0.0.1", request["connect"]), timeout=3) as conn:
                facts["received"] = conn.recv(16).decode()
        except OSError as exc:
            facts["connect_error"] = f"{type(exc).__name__}: {exc}"
    import resource

    facts["rlimit_as"] = resource.getrlimit(resource.RLIMIT_AS)[0]
    return Verdict(task_id=task.id, candidate_hash=candidate_hash(code), backend="interpreter", device="cpu",
                   stage="done", ok=True, message=json.dumps(facts))


def _ask(pool: WorkerPool, request: dict) -> dict:
    verdict = pool.submit(TASK, json.dumps(request), None).result(timeout=240)
    return json.loads(verdict.message)


@pytest.fixture()
def loopback_server():
    """A TCP server on 127.0.0.1 in the test's own network namespace that greets every client."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"hello")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(timeout=2)
    server.close()


def _namespaces_permitted() -> bool:
    """Whether this host lets a process unshare its network namespace (tried in a child)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0 if isolate_network() else 1)
    return os.waitpid(pid, 0)[1] == 0


def _pool(**kwargs) -> WorkerPool:
    return WorkerPool("interpreter", "cpu", 1, runner="test_isolation:probe", sys_path=(HERE,), **kwargs)


def test_server_is_reachable_from_this_process(loopback_server):
    with socket.create_connection(("127.0.0.1", loopback_server), timeout=3) as conn:
        assert conn.recv(16) == b"hello"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="network namespaces are Linux-only")
def test_worker_cannot_connect_to_a_loopback_server_and_reports_the_namespace(loopback_server):
    permitted = _namespaces_permitted()
    with _pool() as pool:
        facts = _ask(pool, {"connect": loopback_server})
        measures = dict(pool.isolation)
    assert measures["network_namespace"] is permitted
    if not permitted:
        pytest.skip("this host refuses new network namespaces; the measure is off (recorded as such)")
    assert "received" not in facts, "a worker reached the parent's loopback server"
    assert "connect_error" in facts


def test_candidate_socket_code_is_rejected_statically_before_running():
    code = ("import socket\nimport torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\n"
            "def k(x):\n    pass\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
            "        socket.create_connection(('127.0.0.1', 80))\n        k[(1,)](x)\n        return x\n")
    assert check_static(code)[0].rule == "static:process-or-network"


def test_api_key_in_the_parent_is_absent_in_the_worker(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-for-test")
    monkeypatch.setenv("HF_TOKEN", "hf-secret-for-test")
    with _pool() as pool:
        facts = _ask(pool, {})
    assert "OPENAI_API_KEY" not in facts["env"] and "HF_TOKEN" not in facts["env"]
    assert "sk-secret-for-test" not in json.dumps(facts["env"])


def test_worker_runs_in_a_private_temporary_directory_removed_afterwards():
    with _pool() as pool:
        facts = _ask(pool, {})
        measures = dict(pool.isolation)
        assert os.path.isdir(facts["cwd"])
    assert facts["cwd"] != os.getcwd() and facts["env"]["HOME"] == facts["cwd"]
    assert measures["private_tmpdir"] == facts["cwd"]
    assert not os.path.exists(facts["cwd"])


def test_worker_runs_under_the_address_space_limit():
    from atrl.harness.sandbox.worker import GIB, WorkerLimits

    with _pool(limits=WorkerLimits(address_space=3 * GIB)) as pool:
        facts = _ask(pool, {})
        measures = dict(pool.isolation)
    assert facts["rlimit_as"] == 3 * GIB == measures["address_space_bytes"]
