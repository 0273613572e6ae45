"""`atrl tasks list` and `atrl tasks show`: browse the suites. Presentation only; loading, presets
and case descriptions come from `atrl.tasks`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from atrl.tasks.kernelbench import resolve_preset
from atrl.tasks.npukernelbench import describe_case
from atrl.tasks.registry import get_task, load_suite
from atrl.tasks.task import Task

tasks_app = typer.Typer(help="List and inspect benchmark tasks.", no_args_is_help=True)

SUITE_HELP = "builtin, kernelbench or npukernelbench"
PATH_HELP = "Checkout of the suite (needed for kernelbench and npukernelbench)."


def register(app: typer.Typer) -> None:
    """Add the `tasks` command group to the `atrl` app."""
    app.add_typer(tasks_app, name="tasks")


def _flags_text(task: Task) -> str:
    return ", ".join(task.flags)


@tasks_app.command("list")
def list_tasks(
    suite: str = typer.Option("builtin", "--suite", help=SUITE_HELP),
    path: Optional[Path] = typer.Option(None, "--path", help=PATH_HELP),
    level: Optional[int] = typer.Option(None, "--level", help="Only this level."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list of task summaries."),
) -> None:
    """List a suite's tasks; files that fail to load are reported on stderr, one line each."""
    loaded = load_suite(suite, path, level)
    err = Console(stderr=True, soft_wrap=True, highlight=False)
    for error in loaded.errors:
        err.print(f"load error: {error}", markup=False)
    if as_json:
        typer.echo(json.dumps([t.summary() for t in loaded.tasks], indent=2))
        return
    table = Table(title=f"{suite}: {len(loaded.tasks)} tasks" + (f", {len(loaded.errors)} load errors" if loaded.errors else ""))
    table.add_column("id", no_wrap=True)
    for column in ("level", "tags", "presets", "cases", "solution", "flags"):
        table.add_column(column, overflow="fold")
    for task in loaded.tasks:
        summary = task.summary()
        table.add_row(task.id, str(task.level), ", ".join(task.tags), ", ".join(summary["presets"]),
                      str(summary["cases"]), "yes" if summary["has_solution"] else "", _flags_text(task))
    # piped output is not cut to 80 columns
    Console(width=None if sys.stdout.isatty() else 200).print(table)


@tasks_app.command("show")
def show_task(
    task_id: str = typer.Argument(..., metavar="ID", help="Task id, e.g. kernelbench/level1/19_ReLU."),
    path: Optional[Path] = typer.Option(None, "--path", help=PATH_HELP),
    preset: Optional[str] = typer.Option(None, "--preset", help="small or full (default: small where it exists)."),
    max_dim: Optional[int] = typer.Option(None, "--max-dim", help="Show the source resized: constants capped at N."),
    as_json: bool = typer.Option(False, "--json", help="Print the task as JSON."),
) -> None:
    """Describe one task and print its reference source at the chosen sizes."""
    task = get_task(task_id, path)
    label, values = resolve_preset(task, preset, max_dim)
    source = task.source_at(None) if not values else _substituted(task, values)
    atol, rtol = task.tolerances()
    if as_json:
        record = {
            **task.summary(),
            "description": task.description,
            "atol": atol,
            "rtol": rtol,
            "precision_bound": task.relative_error_bound(),
            "compute_policy": task.compute_policy,
            "preset_values": task.presets,
            "shown_at": {"preset": label, "values": values},
            "case_specs": [{"name": c.name, "inputs": c.spec} for c in task.cases],
            "source": source,
        }
        typer.echo(json.dumps(record, indent=2))
        return
    out = Console(soft_wrap=True, highlight=False)
    out.print(f"[bold]{task.id}[/]  (level {task.level}, {task.suite})")
    out.print(task.description or "(no description)", markup=False)
    out.print(f"tags: {', '.join(task.tags) or '-'}", markup=False)
    out.print(f"dtype: {task.dtype}   atol {atol:g}   rtol {rtol:g}   relative-error bound {task.relative_error_bound():g}")
    out.print(f"compute policy: {task.compute_policy}   solution: {'yes' if task.solution else 'no'}")
    for flag, reason in task.flags.items():
        out.print(f"flag {flag}: {reason}", markup=False)
    for name, constants in sorted(task.presets.items()):
        shown = ", ".join(f"{k}={v}" for k, v in constants.items()) or "as written"
        out.print(f"preset {name}: {shown}", markup=False)
    if task.multi_case:
        out.print(f"cases: {len(task.cases)}")
        for case in task.cases:
            out.print(f"  {case.name}: {describe_case(case)}", markup=False)
    shown_values = ", ".join(f"{k}={v}" for k, v in values.items()) or "no substitutions"
    out.print(f"\n[bold]reference source[/] at {label} ({shown_values}):")
    typer.echo(source)


def _substituted(task: Task, values: dict[str, int]) -> str:
    from atrl.tasks.resize import substitute_constants

    return substitute_constants(task.source, values)


@tasks_app.command("screen")
def screen_tasks(
    run: Path = typer.Argument(..., help="The --out directory of an `atrl eval` run of the start policy."),
    low: float = typer.Option(0.1, "--low", help="Keep tasks solved in at least this share of episodes."),
    high: float = typer.Option(0.7, "--high", help="Keep tasks solved in at most this share of episodes."),
    min_episodes: int = typer.Option(4, "--min-episodes", min=1, help="Ignore tasks with fewer episodes."),
) -> None:
    """Solve rate per task of an eval run; prints the kept ids as a `task_ids=[...]` override for
    `atrl train --set` (tasks whose every group would have zero advantage are left out)."""
    from atrl.rl.screen import keep, solve_rates

    rates = solve_rates(run)
    kept = keep(rates, low, high, min_episodes)
    table = Table(title=f"solve rate per task ({len(kept)} of {len(rates)} kept: {low:.0%}..{high:.0%})")
    for column in ("task", "solved", "episodes", "rate", "kept"):
        table.add_column(column)
    kept_ids = {r.task_id for r in kept}
    for r in rates:
        table.add_row(r.task_id, str(r.solved), str(r.episodes), f"{r.rate:.0%}", "yes" if r.task_id in kept_ids else "")
    Console(stderr=True, width=200).print(table)
    typer.echo("task_ids=[" + ",".join(r.task_id for r in kept) + "]")
