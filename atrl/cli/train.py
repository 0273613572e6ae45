"""`atrl train`: train a policy with segment-level GRPO from a YAML config (see atrl.rl.config)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console


def register(app: typer.Typer) -> None:
    @app.command("train")
    def train_command(
        config: Path = typer.Option(
            ..., "--config", help="YAML file of TrainConfig fields (configs/*.yaml)."
        ),
        overrides: list[str] = typer.Option(
            [], "--set", help="Override a field: key=value (dotted for agent.*)."
        ),
        out: Path | None = typer.Option(
            None,
            "--out",
            help="Run directory (default: the config's out_dir); resumes when it holds a checkpoint.",
        ),
    ) -> None:
        """Train: sample tasks, run G episodes each through the agent, update with the PPO loss."""
        from atrl.rl.config import load_config
        from atrl.rl.trainer import Trainer

        cfg = load_config(config, overrides, out_dir=str(out) if out is not None else None)
        cfg.agent_config()  # a bad agent.* value fails here, before the model loads
        trainer = Trainer(cfg)
        console = Console(quiet=not trainer.dp.is_main)  # one progress line per step, not one per rank
        if trainer.step:
            console.print(f"resuming {cfg.out_dir} at step {trainer.step}")
        try:
            while trainer.step < cfg.steps:
                r = trainer.train_step()
                console.print(
                    f"step {r['step']}/{cfg.steps}  reward {r['reward_mean']:.3f} (max {r['reward_max']:.3f})  "
                    f"correct {r['correct_rate']:.2f}  segments {r['segments_per_episode']:.1f}  "
                    f"clip {r['clip_fraction']:.3f}  kl {r['approx_kl']:.4f}  "
                    f"|dW| {r['update_norm']:.2e} ({r['policy_fraction_changed']:.0%} of sampled weights)  "
                    f"mismatch {r['mismatch_abs_mean']:.3f}  {r['time_step_s']:.1f}s",
                    highlight=False,
                )
        finally:
            trainer.metrics.close()
            close = getattr(trainer.reward_source, "close", None)
            if close is not None:
                close()
            trainer.dp.close()
        console.print(f"done: metrics in {Path(cfg.out_dir) / 'metrics.jsonl'}")
