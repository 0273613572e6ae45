"""`atrl check`: judge one candidate file for one task and print the verdict.

Exit status: 0 when the candidate is correct, 1 when it is not, 2 on a usage error (missing
file, unknown task, no GPU for `--backend cuda`).
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from atrl.errors import UsageError
from atrl.harness.verdict import Verdict


def _verdict_table(verdict: Verdict) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    rows = [
        ("task", verdict.task_id),
        ("candidate", verdict.candidate_hash + (" (cached)" if verdict.cached else "")),
        ("backend", f"{verdict.backend} — {verdict.device}"),
        ("stage", verdict.stage),
        ("result", "[green]correct[/]" if verdict.ok else f"[red]{verdict.error_class}[/]"),
        ("score", f"{verdict.score:g}"),
    ]
    if verdict.speedup is not None and verdict.timing is not None:
        rows.append(("time", f"{verdict.timing.candidate_ms:.4g} ms (reference {verdict.timing.reference_ms:.4g} ms, "
                             f"speedup {verdict.speedup:.2f}x)"))
    if verdict.stage_seconds:
        rows.append(("seconds", ", ".join(f"{k} {v:.2f}" for k, v in verdict.stage_seconds.items())))
    for name, value in rows:
        table.add_row(name, value)
    return table


def print_verdict(verdict: Verdict, console: Console | None = None) -> None:
    """Readable verdict: a summary table, then the feedback text the agent would see."""
    console = console or Console()
    console.print(_verdict_table(verdict))
    console.print(Panel(verdict.feedback, title="feedback", border_style="green" if verdict.ok else "red"),
                  highlight=False)


def check(
    task: str = typer.Option(..., "--task", help="Task id, e.g. builtin/relu."),
    candidate: Path = typer.Option(..., "--candidate", help="File with the candidate (source or an LLM response)."),
    path: Path | None = typer.Option(None, "--path", help="Suite checkout for kernelbench/npukernelbench tasks."),
    backend: str = typer.Option("auto", "--backend", help="auto | cuda | interpreter | ascend (auto: ascend "
                                                          "for npukernelbench tasks)."),
    trials: int = typer.Option(5, "--trials", min=1, help="Correctness trials."),
    preset: str | None = typer.Option(None, "--preset", help="Task size preset (default: the backend's)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the verdict cache."),
    as_json: bool = typer.Option(False, "--json", help="Print the Verdict as JSON."),
) -> None:
    """Judge CANDIDATE for TASK; exit 0 when correct, 1 when not."""
    from atrl.backends import default_backend_for_suite
    from atrl.harness.api import Harness
    from atrl.jsonio import dumps
    from atrl.tasks.registry import get_task

    _check_candidate_path(candidate)
    try:
        source = candidate.read_text()
    except UnicodeDecodeError:
        raise UsageError(f"candidate file {candidate} is not UTF-8 text",
                         "pass a Python source file or a saved LLM response") from None
    task_record = get_task(task, path)
    if preset is not None and task_record.presets and preset not in task_record.presets:
        raise UsageError(f"task {task_record.id} has no preset {preset!r}",
                         f"choose one of {', '.join(sorted(task_record.presets))}")
    backend = default_backend_for_suite(task_record.suite, backend)
    with Harness(backend=backend, workers=1, trials=trials, preset=preset, use_cache=not no_cache) as harness:
        verdict = harness.evaluate(task_record, source)
    if as_json:
        typer.echo(dumps(verdict))
    else:
        print_verdict(verdict)
    raise typer.Exit(0 if verdict.ok else 1)


def _check_candidate_path(candidate: Path) -> None:
    """Raise UsageError unless `candidate` is a file; a directory is named as one, with a file inside."""
    if candidate.is_dir():
        inside = sorted(candidate.glob("*.py"))
        example = f", e.g. --candidate {inside[0]}" if inside else ""
        raise UsageError(f"--candidate {candidate} is a directory",
                         f"pass the file itself (Python source or a saved LLM response){example}")
    if not candidate.is_file():
        raise UsageError(f"candidate file {candidate} not found", "pass --candidate pointing at a Python file")


def register(app: typer.Typer) -> None:
    app.command("check")(check)
