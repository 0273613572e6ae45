"""`atrl setup ascend`: create the environment the `ascend` backend's workers run in.
Presentation only; what is installed and where lives in `atrl.backends.ascend_env`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

setup_app = typer.Typer(help="Create the environments some backends need.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the `setup` command group to the `atrl` app."""
    app.add_typer(setup_app, name="setup")


@setup_app.command("ascend")
def ascend(
    path: Optional[Path] = typer.Option(None, "--path", help="Where to create it (default: $ATRL_ASCEND_ENV, "
                                                             "else ~/.cache/atrl/envs/ascend)."),
    force: bool = typer.Option(False, "--force", help="Recreate it from scratch."),
) -> None:
    """Create the triton-ascend environment (torch, triton-ascend, pybind11, this project); idempotent."""
    from atrl.backends.ascend_env import ENV_VARIABLE, create_env, env_dir

    target = path or env_dir()
    state, installed = create_env(target, force=force, log=lambda line: typer.echo(f"  {line}"))
    versions = ", ".join(f"{k} {state.versions[k]}" for k in ("triton-ascend", "torch", "python")
                         if k in state.versions)
    typer.echo(f"{'created' if installed else 'already set up'}: {state.root} ({versions})")
    if installed and "created_seconds" in state.versions:
        typer.echo(f"  took {state.versions['created_seconds']} s")
    if path is not None and path.expanduser().resolve() != env_dir().resolve():
        typer.echo(f"  the ascend backend looks for it through ${ENV_VARIABLE}: export {ENV_VARIABLE}={state.root}")
