"""`atrl eval`: run the agent on tasks, journal episodes, print the results table."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table


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


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_command(
        suite: str = typer.Option("builtin", help="builtin | kernelbench | npukernelbench"),
        path: Path | None = typer.Option(None, help="Checkout directory for the kernelbench/npukernelbench suites."),
        level: int | None = typer.Option(None, help="Only tasks of this level."),
        tasks: str | None = typer.Option(None, help="Comma-separated task ids (default: a few builtin level-1 tasks)."),
        limit: int | None = typer.Option(None, help="At most this many tasks."),
        with_solution: bool = typer.Option(False, "--with-solution", help="Only tasks with a reference solution."),
        split: Path | None = typer.Option(None, help="A train/held-out split file: tasks of --split-part, kb examples from train only."),
        split_part: str = typer.Option("heldout", help="train | heldout (with --split)."),
        policy: str = typer.Option("smollm2-135m", help="smollm2-135m | hf:PATH | openai:MODEL@URL | replay:FILE | reference"),
        engine: str | None = typer.Option(None, help="Generation engine of an hf policy: static | compiled | plain (default: static on a GPU, the policy's own loop on CPU)."),
        samples: int = typer.Option(1, help="Episodes per task."),
        max_turns: int = typer.Option(2, help="Turns per episode."),
        context_budget: int = typer.Option(4096, help="Context window in the policy's tokens."),
        turns_per_segment: int = typer.Option(4, help="Compact after this many turns in a segment."),
        max_response_tokens: int = typer.Option(512, help="Tokens per response."),
        temperature: float = typer.Option(0.7, help="Sampling temperature (0 = greedy)."),
        seed: int = typer.Option(0, help="Sampling seed."),
        kb: bool = typer.Option(True, "--kb/--no-kb", help="Inject knowledge-base entries."),
        backend: str = typer.Option("auto", help="auto | cuda | interpreter"),
        preset: str | None = typer.Option(None, help="Task size preset (default: the backend's)."),
        trials: int = typer.Option(5, help="Correctness trials per evaluation."),
        cache: bool = typer.Option(True, "--cache/--no-cache", help="Reuse cached verdicts."),
        out: Path = typer.Option(Path("runs/eval"), help="Run directory (re-run to resume)."),
    ) -> None:
        """Evaluate a policy: the agent writes kernels, the harness judges them, a report is written."""
        from atrl.eval.config import DEFAULT_TASKS, EvalConfig
        from atrl.eval.runner import run_eval

        explicit = [t.strip() for t in tasks.split(",") if t.strip()] if tasks else []
        if not explicit and suite == "builtin" and level is None and limit is None and not with_solution and split is None:
            explicit = list(DEFAULT_TASKS)
        config = EvalConfig(
            suite=suite, path=str(path) if path else None, level=level, tasks=explicit, limit=limit,
            with_solution=with_solution, split=str(split) if split else None, split_part=split_part, policy=policy,
            engine=engine, samples=samples, max_turns=max_turns, context_budget=context_budget, turns_per_segment=turns_per_segment,
            max_response_tokens=max_response_tokens, temperature=temperature, seed=seed, kb=kb, backend=backend,
            preset=preset, trials=trials, use_cache=cache,
        )
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
        import json

        metrics = json.loads((result.run_dir / "metrics.json").read_text())
        console.print(_results_table(metrics))
        if result.episodes_skipped or result.turns_replayed:
            console.print(f"resumed: {result.episodes_skipped} finished episodes kept, {result.turns_replayed} "
                          f"judged turns replayed, {result.episodes_run} episodes finished now")
        console.print(f"report: {result.report}")
