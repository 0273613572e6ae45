"""`atrl kb list`, `atrl kb search` and `atrl kb show`: browse and query the knowledge base.
Presentation only; loading and retrieval live in `atrl.kb` (imported per command: `bm25s` is
not needed by the other commands)."""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

kb_app = typer.Typer(help="Browse and search the platform knowledge base.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the `kb` command group to the `atrl` app."""
    app.add_typer(kb_app, name="kb")


@kb_app.command("list")
def list_entries(
    platform: Optional[str] = typer.Option(None, "--platform", help="cuda, interpreter, ascend or npu "
                                                                    "(entries visible to it)."),
    kind: Optional[str] = typer.Option(None, "--kind", help="guide, pitfall, error-fix or example."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list."),
) -> None:
    """List entries (id, platform, kind, title), sorted by id."""
    from atrl.kb.retriever import default_retriever

    entries = default_retriever().list(platform, kind)
    if as_json:
        typer.echo(json.dumps([{"id": e.id, "platform": e.platform, "kind": e.kind, "title": e.title,
                                "tags": list(e.tags), "classes": list(e.classes)} for e in entries], indent=2))
        return
    table = Table(title=f"knowledge base: {len(entries)} entries")
    for column in ("id", "platform", "kind", "title"):
        table.add_column(column, overflow="fold")
    for e in entries:
        table.add_row(e.id, e.platform, e.kind, e.title)
    Console(width=None if sys.stdout.isatty() else 200).print(table)


@kb_app.command("search")
def search(
    query: str = typer.Argument(..., metavar="QUERY", help="Free text, e.g. an error message."),
    platform: str = typer.Option("cuda", "--platform", help="cuda, interpreter, ascend or npu."),
    k: int = typer.Option(3, "--k", help="How many entries to return."),
    exclude_task: list[str] = typer.Option([], "--exclude-task", help="Task id whose example to hide "
                                                                     "(repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the hits as JSON."),
) -> None:
    """The best-matching entries for QUERY (BM25), best first."""
    from atrl.kb.retriever import default_retriever, platform_scope

    platform_scope(platform)
    hits = default_retriever().search(query, platform, k=k, exclude_tasks=exclude_task)
    if as_json:
        typer.echo(json.dumps([h.to_dict() for h in hits], indent=2))
        return
    if not hits:
        typer.echo("no matching entries")
    for rank, hit in enumerate(hits, start=1):
        typer.echo(f"{rank}. {hit.entry_id}  [{hit.platform}, {hit.kind}]  score {hit.score:.3f}")
        typer.echo(hit.chunk_text.rstrip() + "\n")


@kb_app.command("show")
def show(entry_id: str = typer.Argument(..., metavar="ID", help="Entry id, e.g. cuda-tl-dot or "
                                                                "example/softmax.")) -> None:
    """Print one entry: its metadata, then its text."""
    from atrl.kb.retriever import default_retriever

    entry = default_retriever().get(entry_id)
    typer.echo(f"id: {entry.id}\nplatform: {entry.platform}\nkind: {entry.kind}\ntags: {', '.join(entry.tags)}")
    if entry.classes:
        typer.echo(f"classes: {', '.join(entry.classes)}")
    typer.echo("")
    typer.echo(entry.text())
