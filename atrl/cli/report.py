"""`atrl report DIR`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(run_dir: Path = typer.Argument(..., help="The --out directory of an atrl eval run.")) -> None:
        """Write report.md (tables and plots) for an eval run."""
        from atrl.eval.report import write_report

        path = write_report(run_dir)
        Console().print(f"report: {path}")
