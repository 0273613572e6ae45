"""`atrl eval`'s options: each bad value exits 2 with one line naming the flag and what is allowed,
before any model loads and without leaving anything in --out; a start that fails later leaves
nothing that blocks the corrected command; another configuration in --out says how to resume."""

from __future__ import annotations

import pytest
import typer

from atrl.cli import app, main
from atrl.errors import UsageError
from atrl.eval.config import EvalConfig

REFERENCE_RUN = ["--policy", "reference", "--backend", "interpreter", "--tasks", "relu", "--max-turns", "1",
                 "--max-response-tokens", "4096", "--context-budget", "16384", "--trials", "2", "--no-kb"]


@pytest.fixture(autouse=True)
def _no_model_loads(monkeypatch, tmp_path):
    """Every bad input must fail before a policy is loaded; a test that needs one says so."""
    import atrl.policy

    def refuse(spec, **options):
        raise AssertionError(f"a policy was loaded ({spec}) before the options were checked")

    monkeypatch.setattr(atrl.policy, "load_policy", refuse)
    monkeypatch.setenv("ATRL_CACHE_DIR", str(tmp_path / "cache"))


def _run(capsys, argv: list[str]) -> tuple[int, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.err + captured.out


def _one_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    assert "Traceback" not in output and len(lines) == 1, output
    return lines[0]


@pytest.mark.parametrize("argv, needles", [
    (["--samples", "-1"], ["--samples", "≥ 1", "-1"]),
    (["--samples", "0"], ["--samples", "≥ 1"]),
    (["--temperature", "-1"], ["--temperature", "≥ 0"]),
    (["--max-turns", "0"], ["--max-turns", "≥ 1"]),
    (["--turns-per-segment", "0"], ["--turns-per-segment", "≥ 1"]),
    (["--context-budget", "0"], ["--context-budget", "≥ 1"]),
    (["--max-response-tokens", "0"], ["--max-response-tokens", "≥ 1"]),
    (["--max-response-tokens", "8192"], ["--max-response-tokens 8192", "--context-budget 4096"]),
    (["--trials", "0"], ["--trials", "≥ 1"]),
    (["--seed", "-3"], ["--seed", "≥ 0"]),
    (["--level", "0"], ["--level", "≥ 1"]),
    (["--limit", "0"], ["--limit", "≥ 1"]),
    (["--backend", "tpu"], ["--backend", "auto, cuda, interpreter"]),
    (["--suite", "nosuch"], ["--suite", "builtin, kernelbench, npukernelbench"]),
    (["--split-part", "test"], ["--split-part", "train, heldout"]),
    (["--engine", "fast"], ["--engine", "static, compiled, plain"]),
    (["--set", "top_p=0"], ["--set top_p", "(0, 1]"]),
    (["--policy", "bogus:thing"], ["--policy", "unknown policy spec", "replay:FILE"]),
    (["--policy", "reference", "--engine", "static"], ["--engine static", "hf policies"]),
    (["--policy", "reference", "--preset", "enormous"], ["--preset enormous", "full, small"]),
    (["--policy", "reference", "--tasks", "nosuch/relu"], ["'nosuch'", "builtin, kernelbench"]),
    (["--policy", "reference", "--split", "no-such-split.yaml"], ["--split", "does not exist"]),
])
def test_bad_option_exits_2_naming_the_flag_and_leaves_no_run_directory(argv, needles, capsys, tmp_path):
    out = tmp_path / "run"
    status, output = _run(capsys, ["eval", *argv, "--out", str(out)])
    assert status == 2
    line = _one_line(output)
    problem = line.split(" — ")[0]
    assert needles[0] in problem, (needles[0], line)  # the flag is named in the problem, not only in the fix
    for needle in needles[1:]:
        assert needle in line, (needle, line)
    assert not out.exists()


def test_bad_value_in_the_config_file_names_the_file_and_key(capsys, tmp_path):
    config = tmp_path / "eval.yaml"
    config.write_text("policy: reference\nsamples: 0\n")
    status, output = _run(capsys, ["eval", "--config", str(config), "--out", str(tmp_path / "run")])
    assert status == 2
    assert "samples in" in output and "eval.yaml" in output and "≥ 1" in output
    assert not (tmp_path / "run").exists()


def test_a_start_that_fails_after_the_checks_leaves_nothing_that_blocks_the_corrected_command(
        capsys, tmp_path, monkeypatch):
    import atrl.policy

    def server_down(spec, **options):
        raise UsageError("cannot reach the server", "start it")

    out = tmp_path / "run"
    monkeypatch.setattr(atrl.policy, "load_policy", server_down)
    status, output = _run(capsys, ["eval", *REFERENCE_RUN, "--max-turns", "3", "--out", str(out)])
    assert status == 2 and "cannot reach the server" in output
    assert not out.exists()

    monkeypatch.undo()
    monkeypatch.setenv("ATRL_CACHE_DIR", str(tmp_path / "cache"))
    status, output = _run(capsys, ["eval", *REFERENCE_RUN, "--out", str(out)])  # other options, same --out
    assert status == 0, output
    assert (out / "report.md").exists()


def test_a_failed_start_in_an_existing_directory_keeps_the_directory_and_what_was_there(
        capsys, tmp_path, monkeypatch):
    import atrl.policy

    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    def model_missing(spec, **options):
        raise UsageError("no model", "install it")

    monkeypatch.setattr(atrl.policy, "load_policy", model_missing)
    assert main(["eval", *REFERENCE_RUN, "--out", str(out)]) == 2
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_another_configuration_in_out_says_how_to_resume_and_how_to_start_fresh(capsys, monkeypatch, tmp_path):
    monkeypatch.undo()
    monkeypatch.setenv("ATRL_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    assert main(["eval", *REFERENCE_RUN, "--out", str(out)]) == 0
    saved = (out / "config.yaml").read_text()
    capsys.readouterr()
    status, output = _run(capsys, ["eval", *REFERENCE_RUN, "--max-turns", "2", "--out", str(out)])
    assert status == 2
    line = _one_line(output)
    assert "--max-turns 1 → --max-turns 2" in line and "run with its options (--max-turns 1)" in line
    assert "another --out" in line and "remove" in line
    assert (out / "config.yaml").read_text() == saved


def test_the_config_file_runs_and_flags_override_it(capsys, monkeypatch, tmp_path):
    monkeypatch.undo()
    monkeypatch.setenv("ATRL_CACHE_DIR", str(tmp_path / "cache"))
    config = tmp_path / "eval.yaml"
    config.write_text("policy: reference\nbackend: interpreter\ntasks: [relu]\nmax_turns: 3\n"
                      "max_response_tokens: 4096\ncontext_budget: 16384\ntrials: 2\nkb: false\n")
    out = tmp_path / "run"
    assert main(["eval", "--config", str(config), "--max-turns", "1", "--out", str(out)]) == 0
    import yaml

    saved = yaml.safe_load((out / "config.yaml").read_text())
    assert (saved["policy"], saved["max_turns"], saved["tasks"]) == ("reference", 1, ["relu"])


def test_every_flag_of_eval_is_a_config_field_and_back():
    command = typer.main.get_command(app).commands["eval"]
    names = {opt for param in command.params for opt in param.opts}
    expected = {EvalConfig.flag(f) for f in EvalConfig.model_fields if EvalConfig.flag(f)}
    assert names - {"--help"} == expected | {"--config", "--set", "--out"}


def test_the_turns_bar_ends_at_the_turns_judged_when_episodes_stop_early(capsys, tmp_path, monkeypatch):
    """On an untimed backend an episode stops at its first correct turn: the bar's total, the most
    turns the run could take (3), ends as the turns actually judged (1)."""
    monkeypatch.undo()
    monkeypatch.setenv("ATRL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "120")
    status, output = _run(capsys, ["eval", *REFERENCE_RUN, "--max-turns", "3", "--out", str(tmp_path / "run")])
    assert status == 0, output
    (turns_line,) = [line for line in output.splitlines() if line.strip().startswith("turns")]
    assert "1/1" in turns_line and "/3" not in turns_line, turns_line
