"""`EvalConfig`: one table of defaults, values from a file, `--set` and flags in that order, and
bad values named as the user wrote them, with the allowed range."""

from __future__ import annotations

import pytest

from atrl.agent.config import AgentConfig
from atrl.errors import UsageError
from atrl.eval.config import DEFAULT_TASKS, EvalConfig, describe_allowed, load_eval_config

# What `atrl eval` ran with no options before its defaults moved into EvalConfig.
MAIN_JOB = {
    "suite": "builtin", "path": None, "level": None, "tasks": DEFAULT_TASKS, "limit": None, "split": None,
    "split_part": "heldout", "with_solution": False, "policy": "smollm2-135m-triton", "engine": None, "samples": 1,
    "generation_batch": None,
    "max_turns": 2, "turns_per_segment": 4, "max_segments": 8, "context_budget": 4096, "max_response_tokens": 512,
    "summary_tokens": 256, "target_score": None, "temperature": 0.7, "top_p": 0.95, "seed": 0, "kb": True,
    "kb_tokens": 600, "backend": "auto", "preset": None, "trials": 5, "timed_calls": 100, "workers": None,
    "use_cache": True, "memory_gib": None,
    # judging in worker processes of this machine, as before the Ray harness existed
    "harness": "local", "fleet": "atrl-judges", "fleet_actors": None, "fleet_resource": None,
}


def test_no_options_give_the_main_job_as_before():
    assert load_eval_config().to_dict() == MAIN_JOB


def test_fields_an_eval_does_not_set_come_from_the_agents_defaults():
    agent = AgentConfig()
    config = EvalConfig()
    assert (config.turns_per_segment, config.summary_tokens, config.kb) == (
        agent.turns_per_segment, agent.summary_tokens, agent.kb)


def test_flags_override_set_which_overrides_the_file(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text("policy: reference\nsamples: 3\nmax_turns: 4\ntop_p: 0.5\n")
    config = load_eval_config(path, ["max_turns=5", "top_p=0.8"], {"max_turns": 1, "samples": None})
    assert (config.policy, config.samples, config.max_turns, config.top_p) == ("reference", 3, 1, 0.8)


def test_a_file_that_selects_tasks_gets_no_default_tasks(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text("level: 2\n")
    assert load_eval_config(path).tasks == []
    assert load_eval_config(None, None, {"tasks": "relu, add"}).tasks == ["relu", "add"]


@pytest.mark.parametrize("flags, needles", [
    ({"samples": -1}, ["--samples must be an integer ≥ 1, got -1", "--samples 1 (the default)"]),
    ({"samples": 0}, ["--samples must be an integer ≥ 1, got 0"]),
    ({"temperature": -1.0}, ["--temperature must be a number ≥ 0", "--temperature 0.7"]),
    ({"max_turns": 0}, ["--max-turns must be an integer ≥ 1"]),
    ({"backend": "tpu"}, ["--backend must be one of auto, cuda, interpreter, ascend, got 'tpu'"]),
    ({"level": 0}, ["--level must be an integer ≥ 1", "or leave --level out"]),
    ({"max_response_tokens": 4096}, ["--max-response-tokens 4096 leaves no room", "--context-budget 4096"]),
    ({"split": "configs/split-builtin.yaml", "tasks": "relu"}, ["--split and --tasks"]),
    ({"suite": "kernelbench"}, ["--suite kernelbench needs --path"]),
])
def test_a_bad_flag_is_named_with_its_allowed_values(flags, needles):
    with pytest.raises(UsageError) as info:
        load_eval_config(None, None, flags)
    message = str(info.value)
    assert "\n" not in message
    assert needles[0] in message.split(" — ")[0], message
    for needle in needles[1:]:
        assert needle in message, message


def test_a_bad_value_from_the_file_or_set_names_where_it_was_written(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text("samples: -2\n")
    with pytest.raises(UsageError, match=r"samples in .*eval.yaml must be an integer ≥ 1, got -2"):
        load_eval_config(path)
    with pytest.raises(UsageError, match=r"--set top_p must be a number in \(0, 1\], got 2.*--set top_p=0.95"):
        load_eval_config(None, ["top_p=2"])


def test_an_unknown_key_in_the_file_suggests_the_close_one(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text("polcy: reference\n")
    with pytest.raises(UsageError, match="unknown eval config key 'polcy'.*did you mean 'policy'"):
        load_eval_config(path)


def test_allowed_values_in_words():
    assert describe_allowed("top_p") == "a number in (0, 1]"
    assert describe_allowed("seed") == "an integer ≥ 0"
    assert describe_allowed("split_part") == "one of train, heldout"
    assert describe_allowed("kb") == "true or false"


def test_another_configuration_names_the_options_to_resume_and_how_to_start_fresh(tmp_path):
    saved = EvalConfig(max_turns=1, kb=False).to_dict()
    with pytest.raises(UsageError) as info:
        EvalConfig(max_turns=3).check_resumable(saved, tmp_path)
    message = str(info.value)
    assert "--max-turns 1 → --max-turns 3" in message and "--no-kb → --kb" in message
    assert "run with its options (--max-turns 1 --no-kb)" in message
    assert "another --out" in message and f"remove {tmp_path}" in message


def test_another_generation_batch_is_another_run_but_an_older_run_without_it_resumes(tmp_path):
    """Chunks sample from their own seeds: the draws depend on the chunk size."""
    with pytest.raises(UsageError, match="generation_batch"):
        EvalConfig().check_resumable(EvalConfig(generation_batch=64).to_dict(), tmp_path)
    older = EvalConfig().to_dict()
    del older["generation_batch"]
    EvalConfig().check_resumable(older, tmp_path)


def test_the_shipped_eval_configs_load():
    from pathlib import Path

    shipped = sorted(Path("configs").glob("eval-*.yaml"))
    assert shipped
    for path in shipped:
        load_eval_config(path)


def test_the_memory_setting_reaches_the_evaluations_judge():
    from atrl.eval.runner import _make_harness

    harness = _make_harness(load_eval_config(None, ["memory_gib=2", "backend=interpreter", "workers=1"]))
    try:
        assert harness.memory_capacity == 2 << 30
    finally:
        harness.close()
