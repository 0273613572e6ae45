"""Resume at turn granularity: `atrl eval` killed with SIGKILL inside a generate call (after the
policy answered), between two verdicts of one round, and after a round's verdicts just before the
next generate call, with a torn last line left in turns.jsonl, and resumed each time, ends with
the very files an uninterrupted run writes; the policy is asked for exactly the uninterrupted
run's generate calls (the one the first kill interrupted once more), with the same seeds and
prompts, and nothing journaled is generated or judged again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

DRIVER = Path(__file__).with_name("resume_driver.py")
REPO = Path(__file__).resolve().parents[2]


TASKS = ("builtin/relu", "builtin/add")


def _replay_file(path: Path) -> Path:
    """Responses that differ per task, sample and turn (so do their fake verdicts), and summaries."""
    lines = [{"task_id": t, "sample": s, "turn": turn, "response": f"Attempt {turn} of sample {s} on {t}:\n"
              f"```python\n# variant {(7 * turn + 3 * s + len(t)) % 5}\nclass ModelNew: pass\n```"}
             for t in TASKS for s in range(2) for turn in range(3)]
    lines += [{"task_id": t, "sample": s, "turn": 1, "kind": "summary", "response": f"Two attempts at {t}."}
              for t in TASKS for s in range(2)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _eval_args(replay: Path, out: Path) -> list[str]:
    # 2 tasks x 2 samples, 3 turns with a compaction after the second: generate calls are
    # turn 0, turn 1, the summaries, turn 2 (seeds 3, 4, 5, 6); a target no turn reaches keeps
    # every episode going after a correct turn
    return ["--policy", f"replay:{replay}", "--tasks", ",".join(TASKS), "--samples", "2", "--max-turns", "3",
            "--turns-per-segment", "2", "--context-budget", "4096", "--seed", "3", "--no-kb", "--set", "target_score=9",
            "--backend", "interpreter", "--out", str(out)]


def _run(pause: str, replay: Path, out: Path, calls_log: Path) -> None:
    """Run the driver; with a pause point, SIGKILL its process group once it is there."""
    marker = out.parent / f"paused-{pause.replace(':', '-')}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, str(DRIVER), pause, str(marker), str(calls_log), *_eval_args(replay, out)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        if pause == "none":
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-3000:]
            return
        deadline = time.monotonic() + 300
        while not marker.exists():
            if proc.poll() is not None:
                pytest.fail(f"eval ended (status {proc.returncode}) before {pause}: {proc.stderr.read()[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"eval never reached {pause}")
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _calls(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_eval_killed_at_turn_points_and_resumed_writes_what_an_uninterrupted_run_writes(tmp_path):
    straight, resumed = tmp_path / "straight" / "run", tmp_path / "resumed" / "run"
    for d in (straight.parent, resumed.parent):
        d.mkdir()
    replay = _replay_file(tmp_path / "replay.jsonl")
    _run("none", replay, straight, straight.parent / "calls.jsonl")
    calls = resumed.parent / "calls.jsonl"

    _run("generate:1", replay, resumed, calls)  # the model answered call 1; the answer is lost
    journal = resumed / "turns.jsonl"
    assert [r["record"] for r in map(json.loads, journal.read_text().splitlines())] == \
        ["episodes", "generations"] + ["verdict"] * 4
    _run("verdict:2", replay, resumed, calls)  # call 1 again; two of its four verdicts arrive
    assert journal.read_text().count('"record":"verdict"') == 4 + 2
    _run("before:1", replay, resumed, calls)  # the last two verdicts, the summaries; stop before turn 2
    assert journal.read_text().count('"record":"generations"') == 3
    with journal.open("ab") as fh:  # as if killed while writing a record
        fh.write(b'{"record":"generations","call":3,"kind":"turn","episo')
    assert not (resumed / "episodes.jsonl").exists() or not (resumed / "episodes.jsonl").read_text()
    _run("none", replay, resumed, calls)

    for name in ("episodes.jsonl", "trajectories.jsonl", "metrics.json", "report.md"):
        assert (resumed / name).read_bytes() == (straight / name).read_bytes(), name
    uninterrupted = _calls(straight.parent / "calls.jsonl")
    generate_calls = [i for i, c in enumerate(uninterrupted) if "generate" in c]
    assert [uninterrupted[i]["generate"] for i in generate_calls] == [3, 4, 5, 6]
    assert len(uninterrupted) == 4 + 3 * 4  # four generate calls, three rounds of four verdicts
    again = generate_calls[1]  # lost with the first kill, so generated twice
    assert _calls(calls) == uninterrupted[: again + 1] + uninterrupted[again:]


class Killed(BaseException):
    """Stands in for SIGKILL inside the process (BaseException, so no handler swallows it)."""


class CountingReplay:
    """A replay policy that logs each generate call's seed and raises `Killed` in call `kill_at`."""

    def __init__(self, path: Path, kill_at: int | None = None) -> None:
        from atrl.policy.replay import ReplayPolicy

        self.inner, self.kill_at = ReplayPolicy(path), kill_at
        self.name = self.inner.name
        self.seeds: list[int | None] = []

    def generate(self, requests, params):
        if len(self.seeds) == self.kill_at:
            raise Killed
        self.seeds.append(params.seed)
        return self.inner.generate(requests, params)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


class CorrectWhenMarked:
    """A harness: a response with CORRECT in it is correct, any other one has a mismatch."""

    def __init__(self, **_options: object) -> None:
        pass

    def submit(self, task, response: str):
        from concurrent.futures import Future

        from atrl.harness.verdict import Verdict, candidate_hash

        ok = "CORRECT" in response
        future: Future = Future()
        future.set_result(Verdict(task.id, candidate_hash(response), "fake", "cpu", "done" if ok else "correctness", ok,
                                  error_class=None if ok else "correctness:mismatch", score=1.0 if ok else 0.1,
                                  feedback="Correct." if ok else f"Mismatch in {response[:20]!r}."))
        return future

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def test_a_resumed_eval_replays_episodes_that_finished_before_the_kill(tmp_path, monkeypatch):
    """relu sample 0 is correct at turn 0 and ends there; a kill in a later round keeps its
    episode, and the resumed run replays it so that every later batch is the one it was."""
    from atrl.eval.config import EvalConfig
    from atrl.eval.runner import run_eval

    monkeypatch.setattr("atrl.harness.api.Harness", CorrectWhenMarked)
    lines = [{"task_id": t, "sample": s, "turn": turn,
              "response": ("CORRECT " if (t, s) == ("builtin/relu", 0) or turn == s + 1 else "") + f"try {turn}"}
             for t in TASKS for s in range(2) for turn in range(4)]
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = EvalConfig(tasks=list(TASKS), samples=2, max_turns=4, turns_per_segment=2, target_score=1.0, kb=False,
                        backend="interpreter", seed=7, policy=f"replay:{replay}")
    straight_policy = CountingReplay(replay)
    run_eval(config, tmp_path / "straight" / "run", policy=straight_policy)
    killed = CountingReplay(replay, kill_at=2)
    with pytest.raises(Killed):
        run_eval(config, tmp_path / "resumed" / "run", policy=killed)
    finished = (tmp_path / "resumed" / "run" / "episodes.jsonl").read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in finished] == ["builtin/relu"]  # sample 0 ended at turn 0
    resumed_policy = CountingReplay(replay)
    result = run_eval(config, tmp_path / "resumed" / "run", policy=resumed_policy)
    assert (result.episodes_skipped, result.episodes_run, result.turns_replayed) == (1, 3, 4 + 3)
    assert killed.seeds + resumed_policy.seeds == straight_policy.seeds
    for name in ("episodes.jsonl", "trajectories.jsonl", "metrics.json", "report.md"):
        assert (tmp_path / "resumed" / "run" / name).read_bytes() == (tmp_path / "straight" / "run" / name).read_bytes()
