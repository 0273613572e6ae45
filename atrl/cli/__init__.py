"""The `atrl` command. Each sub-module registers its commands; none holds logic of its own.

Errors the user can fix (`UsageError`) print one line and exit with status 2; `--debug`
shows the traceback instead.
"""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

from atrl.errors import UsageError

app = typer.Typer(
    name="atrl",
    help="ATRL: train and evaluate LLM agents that write Triton kernels.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)
_state = {"debug": False}

# Modules under atrl.cli that each define `register(app)`.
COMMAND_MODULES = ("tasks", "check", "kb", "eval", "report", "train", "sft", "export", "fleet", "setup", "branch")


def installed_version() -> str:
    """The installed distribution's version (its metadata); the source tree's when not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("atrl")
    except PackageNotFoundError:
        from atrl import __version__

        return f"{__version__} (not installed)"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"atrl {installed_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    _state["debug"] = debug


def _show_flags_without_a_type() -> None:
    """Recent typer versions print a flag's type in help (`--json <bool>`), which reads as if the
    flag took a value; show on/off flags as `--json` and `--kb / --no-kb` only."""
    from typer.core import TyperOption

    original = getattr(TyperOption, "display_type_rich", None)
    if original is None or getattr(original, "_atrl_flags", False):
        return  # an older typer: it never prints a type for flags

    def display_type_rich(self, ctx):
        return None if self.is_flag and not self.count else original(self, ctx)

    display_type_rich._atrl_flags = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


def _register_commands() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"atrl.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"atrl.cli.{name}":
                continue  # command group not installed in this build
            raise
        module.register(app)


_register_commands()
_show_flags_without_a_type()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `atrl` console script. Returns the process exit status."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        status = app(args=argv, standalone_mode=False)
    except UsageError as exc:
        if debug:
            raise
        from rich.markup import escape

        # escaped: a message quoting user input such as `--set lr=[x` must print as written
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:  # click raises this for --help and usage errors
        return int(exc.code or 0)
    except Exception as exc:  # click usage errors
        usage, abort = _click_error_types()
        if isinstance(exc, usage):
            exc.show()
            return 2
        if isinstance(exc, abort):
            return 130
        raise
    return status if isinstance(status, int) else 0


def _click_error_types() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """(usage-error classes, abort classes) of click and of the click copy newer typer vendors
    as `typer._click`, whose exceptions are not click's: an unknown command must still be one line."""
    import click

    usage: list[type] = [click.exceptions.ClickException]
    abort: list[type] = [click.exceptions.Abort]
    try:
        from typer._click import exceptions as vendored
    except ImportError:
        pass
    else:
        usage.append(vendored.ClickException)
    abort.extend(cls for cls in (getattr(typer, "Abort", None),) if isinstance(cls, type))
    return tuple(usage), tuple(abort)


if __name__ == "__main__":
    sys.exit(main())
