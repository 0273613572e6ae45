"""`atrl.rl.branch`: turns re-sampled from the exact context of a recorded episode, judged, written
as trajectories whose ok turns are SFT examples."""

from __future__ import annotations

import dataclasses
import json
from concurrent.futures import Future
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from atrl.agent.config import AgentConfig
from atrl.agent.episode import Episode
from atrl.agent.trajectory_io import read_trajectories, write_trajectories
from atrl.cli import app, main
from atrl.harness.verdict import Verdict
from atrl.policy.base import Generation, GenerationRequest, SamplingParams
from atrl.rl.branch import BRANCHES_FILE, TRAJECTORIES_FILE, branch_points, branch_run, load_points
from atrl.rl.sft_data import BuildReport, context_repair_examples, solution_response, trajectory_examples
from atrl.tasks.registry import load_suite

AGENT = AgentConfig(platform="cuda", kb=False, preset="small", max_turns=2, turns_per_segment=1,
                    max_segments=2, max_response_tokens=24, summary_tokens=16, context_budget=4096)
FIXED = "FIXED KERNEL"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from atrl.rl.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="module")
def policy(tiny_dir: Path):
    from atrl.policy.hf import HFPolicy

    return HFPolicy(tiny_dir, device="cpu", dtype=torch.float32)


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in load_suite("builtin").tasks}


def _verdict(task_id: str, ok: bool) -> Verdict:
    return Verdict(task_id, "h", "fake", "cpu", "done" if ok else "correctness", ok,
                   error_class=None if ok else "correctness:mismatch", score=1.0 if ok else 0.0,
                   feedback="Correct." if ok else "Wrong result: output mismatch at index 3.")


def _gen(policy, text: str) -> Generation:
    ids = policy.tokenize(text) + policy.tokenize("<|im_end|>")
    return Generation(text=text, token_ids=ids, logprobs=[-0.5] * len(ids))


def _episode(policy, task, sample: int, first_ok: bool, agent: AgentConfig = AGENT):
    """Two turns with a compaction between them, driven by hand: the policy's summary opens segment 2."""
    episode = Episode(task, sample, policy, agent, None)
    episode.turn_request()
    episode.record_response(_gen(policy, "first answer"))
    episode.record_verdict(_verdict(task.id, first_ok))
    episode.summary_request()
    episode.record_summary(_gen(policy, f"my summary {sample}"))
    episode.turn_request()
    episode.record_response(_gen(policy, "second answer"))
    episode.record_verdict(_verdict(task.id, False))
    return episode.traj


class Scripted:
    """The tiny policy's tokenizer; every second request it sees answers FIXED, the rest junk.
    Records the prompts and seeds it was given."""

    def __init__(self, policy) -> None:
        self.inner, self.name, self.prompts, self.seeds = policy, policy.name, [], []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def generate(self, requests: list[GenerationRequest], params: SamplingParams) -> list[Generation]:
        first = len(self.prompts)
        self.prompts += [r.prompt_ids for r in requests]
        self.seeds.append(params.seed)
        return [_gen(self.inner, FIXED if (first + i) % 2 else "junk") for i in range(len(requests))]


def _judge(task, response: str) -> Future:
    done: Future = Future()
    done.set_result(_verdict(task.id, response == FIXED))
    return done


@pytest.fixture()
def recorded(policy, tasks, tmp_path: Path) -> Path:
    run = tmp_path / "screen"
    run.mkdir()
    write_trajectories(run / "trajectories.jsonl", [
        _episode(policy, tasks["builtin/relu"], 0, first_ok=False),
        _episode(policy, tasks["builtin/add"], 1, first_ok=True),
        _episode(policy, tasks["builtin/relu"], 2, first_ok=False),
    ])
    return run


def test_each_branch_continues_the_recorded_context_and_is_judged(policy, tasks, recorded: Path,
                                                                  tmp_path: Path) -> None:
    points = load_points(recorded, 1)
    assert [(p.trajectory.task_id, p.after_ok) for p in points] == [
        ("builtin/relu", False), ("builtin/add", True), ("builtin/relu", False)]
    scripted = Scripted(policy)
    summary = branch_run(scripted, _judge, points, tasks, tmp_path / "out", 4, 2,
                         SamplingParams(max_tokens=24, seed=7), batch_size=3)
    assert scripted.seeds == [7, 8, 9, 10]  # each generate call its own seed

    # the prompts are segment 2's tokens up to the response: the task and the policy's own summary
    original = points[0].trajectory
    second = original.turns[1]
    assert scripted.prompts[0] == original.segments[1].token_ids[: second.response_start]
    context = policy.detokenize(scripted.prompts[0])
    assert "my summary 0" in context and tasks["builtin/relu"].name in context
    assert len(scripted.prompts) == 4 + 2 + 4

    assert (summary.branches[False], summary.ok[False], summary.branches[True], summary.ok[True]) == (8, 4, 2, 1)
    assert summary.contexts_with_ok[False] == 2 and summary.rate(False) == 0.5

    written = list(read_trajectories(tmp_path / "out" / TRAJECTORIES_FILE))
    assert len(written) == 10
    fixed = next(t for t in written if t.task_id == "builtin/relu" and t.turns[1].verdict["ok"])
    turn = fixed.turns[1]
    assert turn.response_text == FIXED and fixed.best_turn == 1 and fixed.best_score == 1.0
    assert fixed.stop_reason == "branch" and len(fixed.segments) == 2 and len(fixed.turns) == 2
    seg = fixed.segments[1]
    assert seg.token_ids[: turn.response_start] == scripted.prompts[0]
    assert policy.detokenize(seg.token_ids[turn.response_start : turn.response_end]) == FIXED + "<|im_end|>"
    assert len(seg.token_types) == len(seg.token_ids) == len(seg.logprobs)
    assert fixed.turns[0].response_text == "first answer"  # the failed first turn stays as recorded

    # the ok second turns become SFT examples: the own context as prompt, the fix as the only target
    def targets(min_turn: int) -> list[str]:
        examples = trajectory_examples(policy, [tmp_path / "out"], set(tasks), BuildReport(), min_turn=min_turn)
        return sorted(policy.detokenize([i for i, m in zip(e.token_ids, e.loss_mask, strict=True) if m])
                      for e in examples)

    # one repair per context (the same fix after two summaries is two examples) and one keep
    assert targets(1) == [FIXED + "<|im_end|>"] * 3
    assert targets(0) == [FIXED + "<|im_end|>"] * 3 + ["first answer<|im_end|>"]  # and the right first turn
    repairs = trajectory_examples(policy, [tmp_path / "out"], {"builtin/relu"}, BuildReport(), min_turn=1)
    assert sorted("my summary 0" in policy.detokenize(e.token_ids) for e in repairs) == [False, True]


def test_a_branch_run_resumes_where_it_stopped(policy, tasks, recorded: Path, tmp_path: Path) -> None:
    points = load_points(recorded, 1)
    out = tmp_path / "out"
    branch_run(Scripted(policy), _judge, points, tasks, out, 3, 1, SamplingParams(max_tokens=24))
    lines = (out / BRANCHES_FILE).read_text().splitlines()
    (out / BRANCHES_FILE).write_text("\n".join(lines[:-1]) + "\n")  # the last branch was lost
    again = Scripted(policy)
    summary = branch_run(again, _judge, points, tasks, out, 3, 1, SamplingParams(max_tokens=24))
    assert len(again.prompts) == 1
    assert sum(summary.branches.values()) == 7
    assert sorted((r["task_id"], r["sample"], r["branch"])
                  for r in map(json.loads, (out / BRANCHES_FILE).read_text().splitlines())) \
        == [("builtin/add", 1, 0)] + [("builtin/relu", s, k) for s in (0, 2) for k in range(3)]


def test_episodes_that_ended_before_the_turn_are_not_branch_points(policy, tasks) -> None:
    short = _episode(policy, tasks["builtin/relu"], 0, first_ok=False)
    short.turns = short.turns[:1]
    assert branch_points([short], 1) == []


def test_cli_refuses_a_policy_whose_tokens_are_not_the_runs(recorded: Path, tmp_path: Path, capsys) -> None:
    status = main(["branch", str(recorded), "--policy", "reference", "--out", str(tmp_path / "out"),
                   "--backend", "interpreter"])
    output = capsys.readouterr().err
    assert status == 2 and "pass --policy with the policy that made the run" in output, output
    assert not (tmp_path / "out").exists()


def test_cli_branches_a_recorded_run_and_prints_the_rates(tiny_dir: Path, recorded: Path, tmp_path: Path) -> None:
    spec = f"hf:{tiny_dir}"
    result = CliRunner().invoke(app, ["branch", str(recorded), "--policy", spec, "--out", str(tmp_path / "out"),
                                      "--backend", "interpreter", "--workers", "1", "--samples-after-failed", "2",
                                      "--samples-after-ok", "1"])
    assert result.exit_code == 0, result.output
    assert "ok rate" in result.output and "failed" in result.output
    records = [json.loads(line) for line in (tmp_path / "out" / BRANCHES_FILE).read_text().splitlines()]
    assert len(records) == 5 and not any(r["ok"] for r in records)  # a random model writes no kernel


def test_context_repairs_put_the_reference_solution_after_each_failed_turn_in_its_own_context(
        policy, tasks, tmp_path: Path) -> None:
    roomy = dataclasses.replace(AGENT, max_response_tokens=2048, context_budget=16384)
    relu, add = tasks["builtin/relu"], tasks["builtin/add"]
    episodes = [_episode(policy, relu, 0, False, roomy), _episode(policy, add, 1, True, roomy),
                _episode(policy, relu, 2, False, roomy), _episode(policy, relu, 0, False, roomy),
                _episode(policy, relu, 3, False)]  # the last could not write the solution in 24 tokens
    write_trajectories(tmp_path / "trajectories.jsonl", episodes)
    report = BuildReport()
    examples = context_repair_examples(policy, [tmp_path], {relu.id: relu, add.id: add}, report)
    assert [e.source for e in examples] == ["context-repair"] * 2  # relu's two failed first turns
    assert report.skipped == {"duplicate_context": 1, "response_too_long": 1}
    for example, sample in zip(examples, (0, 2), strict=True):
        first = example.loss_mask.index(True)
        assert all(example.loss_mask[first:]) and not any(example.loss_mask[:first])
        turn = episodes[sample // 2 * 2].turns[1]
        assert example.token_ids[:first] == episodes[sample // 2 * 2].segments[1].token_ids[: turn.response_start]
        assert f"my summary {sample}" in policy.detokenize(example.token_ids[:first])
        assert policy.detokenize(example.token_ids[first:]) == solution_response(relu) + "<|im_end|>"
    # a task outside the training part gives no example
    assert context_repair_examples(policy, [tmp_path], {add.id: add}, BuildReport()) == []
