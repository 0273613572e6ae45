"""`atrl eval`: run the agent on tasks, journal episodes, print the results table.

Each option is a field of `atrl.eval.config.EvalConfig`, which holds its default, range and help;
an option left out takes the `--config` file's value, else the field's default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from atrl.eval.config import EvalConfig


def _results_table(metrics: dict) -> Table:
    table = Table(title="results")
    table.add_column("metric")
    table.add_column("best of turns", justify="right")
    table.add_column("last turn", justify="right")
    best, last = metrics["best_of_turns"], metrics["last_turn"]
    rows = [("episodes", "attempts", False), ("compile rate", "compile_rate", True), ("correctness", "correctness", True),
            ("fast_1", "fast_1", True), ("geomean speedup", "speedup_geomean", False)]
    def fmt(v: float | str | None, key: str, pct: bool) -> str:
        from atrl.eval.availability import format_metric

        return f"{v:.0f}" if key == "attempts" else format_metric(v, pct)

    for label, key, pct in rows:
        table.add_row(label, fmt(best.get(key), key, pct), fmt(last.get(key), key, pct))
    return table


BASE_MODEL_HINT = (
    "note: SmolLM2-135M-Instruct without fine-tuning rarely writes a kernel that compiles, so 0% is its "
    "expected result. The default policy, smollm2-135m-triton, adds the adapter this project trained; see "
    "the whole cascade pass with --policy reference (the tasks' own solutions), or bring a stronger model: "
    "--policy hf:DIR or openai:MODEL@URL."
)
ADAPTER_HINT = (
    "note: the default policy (SmolLM2-135M-Instruct with its shipped LoRA adapter) solves only some "
    "simple kernels, so a run of few tasks and samples can show 0%. See docs/default-adapter.md for its "
    "measured rates, --policy reference for the whole cascade passing, and --policy hf:DIR or "
    "openai:MODEL@URL for a stronger model."
)


def zero_correct_hint(policy: str, metrics: dict) -> str | None:
    """A line explaining a run of a builtin small model that solved nothing."""
    if metrics["best_of_turns"].get("correctness"):
        return None
    return {"smollm2-135m": BASE_MODEL_HINT, "smollm2-135m-triton": ADAPTER_HINT}.get(policy)


def _option(name: str) -> Any:
    """The typer option of EvalConfig field `name`: its flag and help, the field's default shown.
    The option's own default is None ("not given"), so a --config file's value is kept."""
    info = EvalConfig.model_fields[name]
    flag = EvalConfig.flag(name)
    if flag is None:
        raise ValueError(f"EvalConfig.{name} is a config-file key only; it has no command-line flag")
    default = info.get_default(call_default_factory=True)
    on_off = info.annotation is bool and default is True
    declaration = f"{flag}/--no-{flag[2:]}" if on_off else flag
    value = EvalConfig.as_option(name, default) if on_off else default
    # escaped: help text is rich markup, where "[default: …]" would read as a style tag
    shown = f" \\[default: {value}]" if default not in (None, [], False) else ""
    return typer.Option(None, declaration, help=f"{info.description}{shown}", show_default=False)


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_command(
        config: Path | None = typer.Option(None, "--config", help="YAML file of eval config keys (the fields of "
                                           "a run's config.yaml); options given here override it."),
        overrides: list[str] = typer.Option([], "--set", help="Set a config key: --set top_p=0.9 (repeatable)."),
        out: Path = typer.Option(Path("runs/eval"), "--out", help="Run directory (re-run to resume)."),
        suite: str | None = _option("suite"),
        path: Path | None = _option("path"),
        level: int | None = _option("level"),
        tasks: str | None = _option("tasks"),
        limit: int | None = _option("limit"),
        with_solution: bool | None = _option("with_solution"),
        split: Path | None = _option("split"),
        split_part: str | None = _option("split_part"),
        policy: str | None = _option("policy"),
        engine: str | None = _option("engine"),
        samples: int | None = _option("samples"),
        max_turns: int | None = _option("max_turns"),
        context_budget: int | None = _option("context_budget"),
        turns_per_segment: int | None = _option("turns_per_segment"),
        max_response_tokens: int | None = _option("max_response_tokens"),
        temperature: float | None = _option("temperature"),
        seed: int | None = _option("seed"),
        kb: bool | None = _option("kb"),
        backend: str | None = _option("backend"),
        preset: str | None = _option("preset"),
        trials: int | None = _option("trials"),
        use_cache: bool | None = _option("use_cache"),
        harness: str | None = _option("harness"),
    ) -> None:
        """Evaluate a policy: the agent writes kernels, the harness judges them, a report is written."""
        flags = {name: value for name, value in locals().items() if name in EvalConfig.model_fields}
        from atrl.eval.config import load_eval_config
        from atrl.eval.start import check_start, undo_failed_start

        run = load_eval_config(config, overrides, flags)
        check_start(run, out)
        with undo_failed_start(out):
            _run_with_progress(run, out)


def _run_with_progress(config: EvalConfig, out: Path) -> None:
    import json

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from atrl.eval.runner import run_eval

    console = Console()
    with Progress(TextColumn("[bold]{task.description:>8}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as progress:
        episodes_bar = progress.add_task("episodes", total=None)
        turns_bar = progress.add_task("turns", total=None)

        def on_episode(done: int, total: int) -> None:
            progress.update(episodes_bar, completed=done, total=total)

        def on_turns(judged: int, most: int) -> None:
            progress.update(turns_bar, completed=judged, total=most)

        result = run_eval(config, out, on_episode=on_episode, on_turns=on_turns)
        # the bar's total was the most turns the run could take; episodes solved early took fewer
        judged = progress.tasks[turns_bar].completed
        progress.update(turns_bar, total=judged if judged else None)
    metrics = json.loads((result.run_dir / "metrics.json").read_text())
    console.print(_results_table(metrics))
    hint = zero_correct_hint(config.policy, metrics)
    if hint:
        console.print(hint, markup=False)
    if result.episodes_skipped or result.turns_replayed:
        console.print(f"resumed: {result.episodes_skipped} finished episodes kept, {result.turns_replayed} "
                      f"judged turns replayed, {result.episodes_run} episodes finished now")
    console.print(f"report: {result.report}")
