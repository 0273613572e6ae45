"""`atrl eval` end to end on the interpreter: the reference oracle, planted failures, resume."""

import json

import pytest

from atrl.errors import UsageError
from atrl.eval.config import EvalConfig
from atrl.eval.report import load_episodes
from atrl.eval.runner import run_eval
from atrl.jsonio import read_journal
from atrl.tasks.registry import get_task

pytestmark = pytest.mark.slow

BIG = {"max_response_tokens": 4096, "context_budget": 16384}


def _config(**kw) -> EvalConfig:
    base = dict(backend="interpreter", trials=2, workers=2, kb=False, use_cache=False, **BIG)
    base.update(kw)
    return EvalConfig(**base)


def test_reference_policy_is_correct_on_every_task_and_writes_the_run(tmp_path):
    config = _config(policy="reference", tasks=["relu", "softmax", "matmul"], max_turns=1)
    result = run_eval(config, tmp_path)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["best_of_turns"]["correctness"] == 1.0
    # the interpreter never invents timing
    assert metrics["best_of_turns"]["speedup_geomean"] == "n/a (not timed on interpreter)"
    assert (metrics["backends"], metrics["timed"]) == (["interpreter"], False)
    assert result.episodes_run == 3
    assert len(list(read_journal(tmp_path / "trajectories.jsonl"))) == 3
    assert (tmp_path / "config.yaml").exists() and result.report.exists()


def test_replay_with_planted_failures_reports_exactly_the_planted_rates(tmp_path):
    solution = get_task("builtin/relu").solution
    broken = solution.replace("tl.maximum(x, 0.0)", "tl.maximum(x, 0.5)")
    lines = [
        # relu: wrong values on turn 0, correct on turn 1 → best-of-turns correct, last-turn correct
        {"task_id": "builtin/relu", "turn": 0, "response": f"```python\n{broken}\n```"},
        {"task_id": "builtin/relu", "turn": 1, "response": f"```python\n{solution}\n```"},
        # add: correct on turn 0, no code on turn 1 → best correct, last not even compiled
        {"task_id": "builtin/add", "turn": 0, "response": "```python\n" + get_task("builtin/add").solution + "\n```"},
        {"task_id": "builtin/add", "turn": 1, "response": "I give up."},
        # sigmoid: never correct (no Triton kernel at all: rejected statically)
        {"task_id": "builtin/sigmoid", "turn": 0, "response": "```python\nimport torch\nclass ModelNew(torch.nn.Module):\n"
         "    def forward(self, x):\n        return torch.sigmoid(x)\n```"},
        {"task_id": "builtin/sigmoid", "turn": 1, "response": "no code"},
    ]
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(x) + "\n" for x in lines))
    # a target no turn reaches: add's episode goes on after its correct turn 0
    config = _config(policy=f"replay:{replay}", tasks=["relu", "add", "sigmoid"], max_turns=2, target_score=9.0)
    run_eval(config, tmp_path / "run")
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    best, last = metrics["best_of_turns"], metrics["last_turn"]
    assert best["correctness"] == pytest.approx(2 / 3)
    assert last["correctness"] == pytest.approx(1 / 3)
    assert last["compile_rate"] == pytest.approx(1 / 3)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "static:no-triton-kernel" in report and "correctness:mismatch" in report


def test_rerun_fills_only_missing_episodes_and_refuses_another_configuration(tmp_path):
    config = _config(policy="reference", tasks=["relu", "add"], samples=2, max_turns=1)
    run_eval(config, tmp_path)
    episodes = tmp_path / "episodes.jsonl"
    lines = episodes.read_text().splitlines(keepends=True)
    episodes.write_text("".join(lines[:-1]) + lines[-1][:10])  # lose one record, leave a torn tail
    result = run_eval(config, tmp_path)
    assert (result.episodes_skipped, result.episodes_run) == (3, 1)
    keys = sorted(ep.key for ep in load_episodes(tmp_path))
    assert keys == [("builtin/add", 0), ("builtin/add", 1), ("builtin/relu", 0), ("builtin/relu", 1)]
    with pytest.raises(UsageError, match="another configuration"):
        run_eval(_config(policy="reference", tasks=["relu", "add"], samples=2, max_turns=3), tmp_path)


def test_split_selects_its_part_and_limits_kb_examples_to_training_tasks(tmp_path, monkeypatch):
    from atrl.eval import runner
    from atrl.rl.split import read_split

    split_file = "configs/split-builtin.yaml"
    heldout = read_split(split_file).ids("heldout")
    config = _config(policy="reference", split=split_file, split_part="heldout", kb=True, max_turns=1)
    assert [t.id for t in runner.select_tasks(config)] == heldout

    seen = {}

    class RecordingInjector:
        def __init__(self, **kw):
            seen.update(kw)

        def for_episode(self, task):
            return ""

        def after_verdict(self, task, verdict):
            return ""

    monkeypatch.setattr("atrl.kb.inject.KnowledgeInjector", RecordingInjector)
    monkeypatch.setattr(runner, "select_tasks", lambda c: [get_task("builtin/relu")])
    run_eval(config, tmp_path)
    assert seen["allow_example_tasks"] == read_split(split_file).ids("train")
    assert not set(seen["allow_example_tasks"]) & set(heldout)


def test_engine_applies_to_hf_policies_only(tmp_path):
    config = _config(policy="reference", tasks=["relu"], max_turns=1, engine="static")
    with pytest.raises(UsageError, match="applies to hf policies"):
        run_eval(config, tmp_path)


def _handed_to_load_policy(tmp_path, monkeypatch, **config) -> dict:
    """The spec and options `run_eval` loads its policy with (stopped right there)."""
    import atrl.policy

    seen: dict = {}

    def fake_load_policy(spec, **options):
        seen.update(options, spec=spec)
        raise UsageError("stop here", "nothing")

    monkeypatch.setattr(atrl.policy, "load_policy", fake_load_policy)
    with pytest.raises(UsageError, match="stop here"):
        run_eval(_config(policy="hf:some/dir", tasks=["relu"], max_turns=1, **config), tmp_path)
    return seen


def test_engine_is_handed_to_the_hf_policy(tmp_path, monkeypatch):
    assert _handed_to_load_policy(tmp_path, monkeypatch, engine="static") == {"spec": "hf:some/dir", "engine": "static"}


def test_generation_batch_is_the_hf_policys_max_batch_and_refused_for_others(tmp_path, monkeypatch):
    assert _handed_to_load_policy(tmp_path, monkeypatch, generation_batch=64) == {"spec": "hf:some/dir",
                                                                                  "max_batch": 64}
    with pytest.raises(UsageError, match="generation_batch applies to hf policies"):
        run_eval(_config(policy="reference", tasks=["relu"], max_turns=1, generation_batch=64), tmp_path / "r")


def test_split_with_level_keeps_only_that_levels_tasks_of_the_part():
    from atrl.eval.runner import select_tasks
    from atrl.rl.split import read_split

    heldout = set(read_split("configs/split-builtin.yaml").ids("heldout"))
    level1 = select_tasks(EvalConfig(split="configs/split-builtin.yaml", split_part="heldout", level=1))
    everything = select_tasks(EvalConfig(split="configs/split-builtin.yaml", split_part="heldout"))
    assert level1 and all(t.level == 1 and t.id in heldout for t in level1)
    assert {t.id for t in everything} == heldout - {t.id for t in everything if t.skipped}
    assert len(level1) < len(everything)


def test_on_an_untimed_backend_an_episode_stops_at_its_first_correct_turn(tmp_path):
    from atrl.eval.runner import agent_config_for

    assert agent_config_for(_config(), "interpreter", "small", timed=False).target_score == 1.0
    assert agent_config_for(_config(), "cuda", None, timed=True).target_score is None
    assert agent_config_for(_config(target_score=0.5), "interpreter", "small", timed=False).target_score == 0.5
    run_eval(_config(policy="reference", tasks=["relu"], max_turns=3), tmp_path)
    (episode,) = load_episodes(tmp_path)
    assert len(episode.turns) == 1 and episode.stop_reason == "target_score"
