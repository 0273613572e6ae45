"""`atrl sft`: supervised warm start of a policy on the training split's reference solutions."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console


def register(app: typer.Typer) -> None:
    @app.command("sft")
    def sft_command(
        config: Path | None = typer.Option(None, "--config", help="SFT config YAML (e.g. configs/sft-smollm2.yaml)."),
        overrides: list[str] = typer.Option([], "--set", help="Override a config key: --set lr=1e-4 (repeatable)."),
        out: Path | None = typer.Option(None, "--out", help="Run directory (default: the config's out_dir)."),
    ) -> None:
        """Fine-tune on (agent prompt → reference solution) pairs; writes OUT/model (use --policy hf:OUT/model)."""
        from atrl.agent.config import AgentConfig
        from atrl.rl.sft import load_sft_config, run_sft

        cfg = load_sft_config(config, overrides, out_dir=str(out) if out else None)
        AgentConfig(**cfg.agent)  # a bad agent.* value fails here, before the model loads
        console = Console()

        def on_step(record: dict) -> None:
            console.print(f"step {record['step']}/{record['total_steps']}  loss {record['loss']:.4f}  "
                          f"lr {record['lr']:.2e}  {record['time_step_s']:.2f}s", highlight=False)

        result = run_sft(cfg, on_step=on_step)
        kept = ", ".join(f"{k}: {v}" for k, v in sorted(result.report.kept.items()))
        skipped = ", ".join(f"{k}: {v}" for k, v in sorted(result.report.skipped.items())) or "none"
        console.print(f"examples {result.examples} ({kept}); skipped {skipped}", highlight=False)
        console.print(f"model: {result.model_dir}  (evaluate with --policy hf:{result.model_dir})", highlight=False)
