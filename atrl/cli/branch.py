"""`atrl branch`: re-sample a turn of a recorded run from the contexts the policy saw, judge each
sample, and write them as trajectories (rejection-sampling data for later turns)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from atrl.errors import UsageError


def register(app: typer.Typer) -> None:
    @app.command("branch")
    def branch_command(
        run: Path = typer.Argument(..., help="An `atrl eval` or `atrl train` run directory, or a trajectory file."),
        policy: str = typer.Option(..., "--policy", help="The policy that made the run (its tokens are the prompts)."),
        out: Path = typer.Option(..., "--out", help="Directory for trajectories.jsonl and branches.jsonl (resumes)."),
        turn: int = typer.Option(1, "--turn", min=1, help="The turn to re-sample (0-based; 1 = the second)."),
        after_failed: int = typer.Option(8, "--samples-after-failed", min=0,
                                         help="Samples per episode whose previous turn failed."),
        after_ok: int = typer.Option(1, "--samples-after-ok", min=0,
                                     help="Samples per episode whose previous turn was right."),
        backend: str = typer.Option("auto", "--backend", help="Backend that judges the samples."),
        workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Judge worker processes."),
        path: Optional[Path] = typer.Option(None, "--path", help="Checkout of the run's suite (kernelbench, ...)."),
        batch_size: int = typer.Option(64, "--batch-size", min=1, help="Prompts per generate call."),
    ) -> None:
        """Samples of turn TURN from each episode's own context (its summary and feedback), judged:
        the table gives the ok rate after a failed and after a right previous turn; the ok samples
        train a start with `atrl sft` (`trajectories: [OUT]`)."""
        from atrl.agent.config import AgentConfig
        from atrl.harness.api import Harness
        from atrl.policy import load_policy
        from atrl.rl.branch import branch_run, load_points
        from atrl.rl.sft_data import decodes_to
        from atrl.tasks.registry import load_suite

        points = load_points(run, turn)
        agent = AgentConfig(**{k: v for k, v in points[0].trajectory.config.items()
                               if k in AgentConfig.__dataclass_fields__})
        suites = {p.trajectory.task_id.split("/", 1)[0] for p in points}
        tasks = {t.id: t for suite in suites for t in load_suite(suite, path).tasks}
        loaded = load_policy(policy)
        first = points[0].trajectory.turns[turn - 1]
        ids = points[0].trajectory.segments[first.segment].token_ids[first.response_start:first.response_end]
        if not decodes_to(loaded, list(ids), first.response_text):
            raise UsageError(f"the run's tokens are not {policy}'s: its recorded responses do not decode with it",
                             "pass --policy with the policy that made the run")
        console = Console()
        with Harness(backend=backend, workers=workers, preset=agent.task_preset()) as harness, \
                Progress(TextColumn("branches"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                         console=console) as progress:
            bar = progress.add_task("branches", total=None)
            summary = branch_run(loaded, harness.submit, points, tasks, out, after_failed, after_ok,
                                 agent.sampling(agent.max_response_tokens, 0), batch_size,
                                 on_batch=lambda done, total: progress.update(bar, completed=done, total=total))
        table = Table(title=f"turn {turn} re-sampled from {len(points)} episodes of {run}")
        for column in ("previous turn", "episodes", "samples", "ok", "ok rate", "episodes with an ok sample"):
            table.add_column(column)
        for after, name in ((False, "failed"), (True, "right")):
            rate = summary.rate(after)
            table.add_row(name, str(summary.contexts[after]), str(summary.branches[after]), str(summary.ok[after]),
                          "-" if rate is None else f"{rate:.1%}", str(summary.contexts_with_ok[after]))
        console.print(table)
        console.print(f"trajectories: {out / 'trajectories.jsonl'}", highlight=False)
