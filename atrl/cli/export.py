"""`atrl export`: merge a LoRA adapter into its base model and write a plain transformers directory."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console


def register(app: typer.Typer) -> None:
    @app.command("export")
    def export_command(
        adapter: Path = typer.Argument(..., help="A LoRA adapter directory (e.g. RUN/checkpoints/step_000010/model)."),
        out: Path = typer.Option(..., "--out", help="Directory to write the merged model and its tokenizer to."),
        dtype: str = typer.Option("bfloat16", "--dtype", help="Weights' dtype in OUT: bfloat16 | float32."),
    ) -> None:
        """Merge an adapter into its base (the model named in its atrl_base.json) and save it (use --policy hf:OUT)."""
        from atrl.policy.export import export_merged

        written = export_merged(adapter, out, dtype)
        Console().print(f"merged model: {written}  (evaluate with --policy hf:{written})", highlight=False)
