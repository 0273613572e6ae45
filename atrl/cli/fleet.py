"""`atrl fleet status | stop`: the Ray judge fleet's actors, and removing them.

Judge actors are detached: they outlive the runs that started them, so that training ranks and
evaluations share them. `status` lists them with their jobs; `stop` kills them (their worker
processes go with them).
"""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from atrl.harness import (
    DEFAULT_FLEET,  # the fleet modules import the pool and torch: only when a command runs
)


def _options(fleet: str, address: str | None):
    from atrl.harness.distributed.fleet import FleetOptions, connect

    connect(address)
    return FleetOptions(name=fleet)


def register(app: typer.Typer) -> None:
    fleet_app = typer.Typer(help="The Ray judge fleet: status, stop.", no_args_is_help=True)
    app.add_typer(fleet_app, name="fleet")
    fleet_option = typer.Option(DEFAULT_FLEET, "--fleet", help="Fleet name.")
    address_option = typer.Option(None, "--address", help="Ray cluster (ray://HOST:PORT or HOST:PORT; "
                                  "default: $RAY_ADDRESS or the cluster on this machine).")

    @fleet_app.command("status")
    def status(fleet: str = fleet_option, address: str | None = address_option) -> None:
        """List the fleet's judge actors: node, device, workers, jobs."""
        from atrl.harness.distributed.fleet import fleet_status

        members = fleet_status(_options(fleet, address))
        if not members:
            Console().print(f"fleet {fleet!r} has no actors")
            return
        table = Table(title=f"fleet {fleet}")
        for column in ("actor", "node", "pid", "backend", "device", "gpus", "workers", "jobs", "shared"):
            table.add_column(column)
        for index, m in enumerate(members):
            table.add_row(str(index), m.node, str(m.pid), m.backend, m.device, ",".join(m.gpus) or "-",
                          str(m.workers), str(m.jobs_started), str(m.jobs_joined))
        Console().print(table)

    @fleet_app.command("stop")
    def stop(fleet: str = fleet_option, address: str | None = address_option) -> None:
        """Kill the fleet's judge actors."""
        from atrl.harness.distributed.fleet import stop_fleet

        Console().print(f"stopped {stop_fleet(_options(fleet, address))} actor(s) of fleet {fleet!r}")
