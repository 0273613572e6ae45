"""Where candidates are judged, chosen by one configuration value (`harness` in eval and training
configs, `atrl eval --harness`):

  local            worker processes of this machine (`Harness`), as always
  ray              a Ray fleet on the cluster `ray.init()` finds: `$RAY_ADDRESS`, one started on
                   this machine with `ray start`, else a new local one
  ray://HOST:PORT  a Ray fleet on a remote cluster, through Ray Client

Ray is an extra (`pip install 'atrl[ray]'`); only the Ray choices import it.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from atrl.errors import UsageError
from atrl.harness import api

HARNESS_CHOICES = "local, ray or ray://HOST:PORT"
_RAY_CLIENT = re.compile(r"ray://[^\s/:]+:\d+")


@dataclass(frozen=True)
class HarnessTarget:
    """A parsed `harness` value: `ray` False for local; `address` the Ray Client address or None."""

    ray: bool
    address: str | None = None


def parse_harness(value: str) -> HarnessTarget:
    """The target `value` names; ValueError (naming the choices) for anything else."""
    if value == "local":
        return HarnessTarget(ray=False)
    if value == "ray":
        return HarnessTarget(ray=True)
    if _RAY_CLIENT.fullmatch(value):
        return HarnessTarget(ray=True, address=value)
    raise ValueError(f"harness {value!r} is not one of {HARNESS_CHOICES}")


def check_harness_available(value: str) -> None:
    """UsageError, naming the extra, when `value` needs Ray and it is not installed."""
    if parse_harness(value).ray and importlib.util.find_spec("ray") is None:
        from atrl.harness.distributed.fleet import RAY_EXTRA_FIX

        raise UsageError(f"harness {value!r} needs the `ray` package, which is not installed", RAY_EXTRA_FIX)


def gib_bytes(gib: float | None) -> int | None:
    """GiB (a config's memory setting) as bytes; None stays None (the device's free memory)."""
    return None if gib is None else int(gib * (1 << 30))


def make_harness(harness: str = "local", *, fleet: str | None = None, fleet_actors: int | None = None,
                 fleet_resource: str | None = None, gpus: Sequence[int] | None = None,
                 **options: Any) -> api.Harness:
    """The harness `harness` names, built with `Harness`'s `options` (backend, workers, trials,
    preset, ...). fleet/fleet_actors/fleet_resource: the Ray fleet's name, its actor count when it
    is created, the custom resource its actors need (see `FleetOptions`); ignored locally. gpus:
    the local GPUs to judge on; a Ray fleet judges on its own."""
    try:
        target = parse_harness(harness)
    except ValueError as exc:
        raise UsageError(str(exc), f"choose {HARNESS_CHOICES}") from None
    if not target.ray:
        return api.Harness(gpus=gpus, **options)
    check_harness_available(harness)
    from atrl.harness.distributed.fleet import DEFAULT_FLEET, FleetOptions
    from atrl.harness.distributed.ray_harness import RayHarness

    fleet_options = FleetOptions(name=fleet or DEFAULT_FLEET, actors=fleet_actors, resource=fleet_resource)
    return RayHarness(address=target.address, fleet=fleet_options, **options)
