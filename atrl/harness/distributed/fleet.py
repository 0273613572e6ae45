"""A fleet of judge actors on a Ray cluster: named, detached, shared by every driver naming it.

Actor `i` of fleet `NAME` is the detached actor `NAME-i` in the `atrl` namespace: the first
driver creates the actors (`get_if_exists`, so two drivers starting together create each one
once), later drivers — other training ranks, an `atrl eval` — find them by name. Detached
actors outlive their creator; `stop_fleet` (or `atrl fleet stop`) removes them. A judge actor
needs one GPU on cuda (Ray sets its `CUDA_VISIBLE_DEVICES`), one NPU on ascend where the cluster
has NPUs (Ray's `NPU` resource; Ray sets `ASCEND_RT_VISIBLE_DEVICES`), or its workers' CPUs on the
interpreter and on ascend without NPUs (triton-ascend's lowering and interpreter), plus one unit of
`FleetOptions.resource` when set: judge nodes advertise it
(`ray start --resources='{"atrl_judge": 8}'`), trainer nodes do not, so judges never take a
trainer's or a rollout engine's GPUs. Ray restarts a crashed actor (`max_restarts=-1`); the
dispatcher re-sends the jobs it lost (`atrl.harness.distributed.dispatch`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from atrl.errors import UsageError
from atrl.harness import DEFAULT_FLEET
from atrl.harness.distributed.judge_actor import CPU_WORKERS_PER_ACTOR, JudgeActor, JudgeSpec, MemberInfo

NAMESPACE = "atrl"
PLACE_TIMEOUT_S = 300.0  # placing an actor and importing torch in it on a loaded node
RESTART_POLL_S = 0.5
NPU_RESOURCE = "NPU"  # the resource Ray registers for Ascend NPUs
RAY_EXTRA_FIX = "install it with pip install 'atrl[ray]', or judge here with --harness local"


def import_ray() -> Any:
    """The `ray` module, or the UsageError naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise UsageError("judging on a Ray cluster needs the `ray` package, which is not installed",
                         RAY_EXTRA_FIX) from None
    return ray


@dataclass(frozen=True)
class FleetOptions:
    """Which fleet, and how to create it when it does not exist yet. actors: judge actors to
    start (None: one per GPU, or per unit of `resource`, or per `CPU_WORKERS_PER_ACTOR` CPUs on
    the interpreter). resource: a custom Ray resource each actor needs one unit of."""

    name: str = DEFAULT_FLEET
    actors: int | None = None
    resource: str | None = None
    namespace: str = NAMESPACE

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", self.name):
            raise UsageError(f"fleet name {self.name!r} is not a plain name",
                             "use letters, digits, '.', '_' and '-', e.g. atrl-judges")
        if self.actors is not None and self.actors < 1:
            raise UsageError(f"a fleet needs at least one actor, got {self.actors}", "pass 1 or more actors")


@dataclass(frozen=True)
class FleetBackend:
    """The backend the fleet's actors judge on, as the driver's cascade reads it (the cache key
    names its device and the verdicts its versions)."""

    name: str
    platform: str
    timed: bool
    default_preset: str | None
    device: str
    library_versions: dict[str, str]
    label: str = ""  # as reports name it (e.g. "ascend:lowering")

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name)

    def device_name(self) -> str:
        return self.device

    def versions(self) -> dict[str, str]:
        return dict(self.library_versions)


@dataclass
class Fleet:
    """The live actors of one fleet (actor handles, by index) and what each reported."""

    options: FleetOptions
    handles: list[Any]
    members: list[MemberInfo]
    backend: FleetBackend


def connect(address: str | None) -> None:
    """Join the Ray cluster at `address` ("ray://HOST:PORT" through Ray Client, "HOST:PORT" of
    a head node); None: `$RAY_ADDRESS` or a cluster started on this machine, else a new local
    one. Nothing happens when this process is already connected."""
    ray = import_ray()
    if ray.is_initialized():
        return
    try:
        ray.init(address=address, log_to_driver=False)
    except ConnectionError as exc:
        raise UsageError(f"could not reach the Ray cluster at {address}: {exc}",
                         "start it (ray start --head, see docs/distributed.md) or pass its address") from None
    except ModuleNotFoundError as exc:  # Ray Client (ray://) needs grpcio, which the extra brings
        raise UsageError(f"connecting to {address} needs {exc.name}, which is not installed",
                         RAY_EXTRA_FIX) from None


def start_fleet(spec: JudgeSpec, options: FleetOptions = FleetOptions()) -> Fleet:
    """The fleet `options.name`: its existing actors, first creating the missing ones among the
    `options.actors` wanted (or the default count when none exists). Raises UsageError when an
    actor cannot be placed, when the fleet judges with another spec, or when its actors differ
    in device or library versions (one cache key must fit every actor)."""
    ray = import_ray()
    spec = _concrete(spec, ray.cluster_resources())
    existing = _actor_names(options)
    wanted = options.actors or len(existing) or _default_actor_count(spec, options, ray.cluster_resources())
    actor_class = ray.remote(JudgeActor)
    by_name = {name: ray.get_actor(name, namespace=options.namespace) for name in existing}
    for index in range(wanted):
        name = f"{options.name}-{index}"
        if name not in by_name:
            by_name[name] = actor_class.options(
                name=name, namespace=options.namespace, lifetime="detached", get_if_exists=True, max_restarts=-1,
                max_task_retries=0, max_concurrency=1000,
                **_resources(spec, options, ray.cluster_resources())).remote(spec)
    names = sorted(by_name, key=lambda n: int(n.rsplit("-", 1)[1]))
    handles = [by_name[name] for name in names]
    members = _describe(ray, handles, names, spec, options)
    return Fleet(options=options, handles=handles, members=members, backend=_common_backend(members, options))


def fleet_status(options: FleetOptions = FleetOptions()) -> list[MemberInfo]:
    """What each actor of the fleet reports (jobs started and shared included); [] when none."""
    ray = import_ray()
    names = _actor_names(options)
    return describe_members(ray, [ray.get_actor(name, namespace=options.namespace) for name in names])


def describe_members(ray: Any, handles: list[Any], timeout_s: float = PLACE_TIMEOUT_S) -> list[MemberInfo]:
    """Each actor's `describe()`, waiting for one that Ray is restarting (it answers
    `ActorUnavailableError` meanwhile) up to `timeout_s`."""
    from ray.exceptions import ActorUnavailableError, GetTimeoutError

    deadline = time.monotonic() + timeout_s
    members: list[MemberInfo] = []
    for handle in handles:
        while True:
            try:
                members.append(ray.get(handle.describe.remote(), timeout=max(1.0, deadline - time.monotonic())))
                break
            except ActorUnavailableError:
                if time.monotonic() > deadline:
                    raise GetTimeoutError("an actor stayed unavailable (restarting)") from None
                time.sleep(RESTART_POLL_S)
    return members


def stop_fleet(options: FleetOptions = FleetOptions()) -> int:
    """Kill every actor of the fleet (their worker processes go with them); returns how many."""
    ray = import_ray()
    names = _actor_names(options)
    for name in names:
        try:
            ray.kill(ray.get_actor(name, namespace=options.namespace), no_restart=True)
        except ValueError:  # gone meanwhile
            pass
    return len(names)


def _actor_names(options: FleetOptions) -> list[str]:
    """Names of the fleet's live actors, by index."""
    from ray.util import list_named_actors

    pattern = re.compile(re.escape(options.name) + r"-(\d+)")
    found = {}
    for entry in list_named_actors(all_namespaces=True):
        match = pattern.fullmatch(entry["name"])
        if match and entry["namespace"] == options.namespace:
            found[int(match.group(1))] = entry["name"]
    return [found[i] for i in sorted(found)]


def _concrete(spec: JudgeSpec, resources: dict[str, float]) -> JudgeSpec:
    """`spec` with backend "auto" made cuda or interpreter by the cluster's GPUs, so that every
    driver of a fleet compares the same spec."""
    from dataclasses import replace

    if spec.backend != "auto":
        return spec
    return replace(spec, backend="cuda" if resources.get("GPU", 0) > 0 else "interpreter")


def _resources(spec: JudgeSpec, options: FleetOptions, cluster: dict[str, float]) -> dict[str, Any]:
    """One CPU per worker (compiling and the interpreter run there; the pool gives each worker
    one thread), one GPU per actor on cuda, one NPU per actor on ascend where `cluster` (Ray's
    cluster resources) has NPUs, and the placement resource when set."""
    from atrl.harness.api import WORKERS_PER_GPU

    custom: dict[str, float] = {options.resource: 1} if options.resource else {}
    if spec.backend == "cuda":
        needs: dict[str, Any] = {"num_gpus": 1, "num_cpus": spec.workers or WORKERS_PER_GPU}
    elif spec.backend == "ascend" and cluster.get(NPU_RESOURCE, 0) > 0:
        needs = {"num_gpus": 0, "num_cpus": spec.workers or WORKERS_PER_GPU}
        custom[NPU_RESOURCE] = 1
    else:
        needs = {"num_gpus": 0, "num_cpus": spec.workers or CPU_WORKERS_PER_ACTOR}
    return {**needs, "resources": custom} if custom else needs


def _default_actor_count(spec: JudgeSpec, options: FleetOptions, resources: dict[str, float]) -> int:
    if options.resource:
        units = int(resources.get(options.resource, 0))
        if units < 1:
            raise UsageError(f"no node of the Ray cluster offers the resource {options.resource!r}",
                             f"start judge nodes with ray start --resources='{{\"{options.resource}\": N}}'")
        return units
    if spec.backend == "cuda":
        return max(1, int(resources.get("GPU", 0)))
    if spec.backend == "ascend" and resources.get(NPU_RESOURCE, 0) > 0:
        return int(resources[NPU_RESOURCE])
    return max(1, int(resources.get("CPU", 1)) // (spec.workers or CPU_WORKERS_PER_ACTOR))


def _describe(ray: Any, handles: list[Any], names: list[str], spec: JudgeSpec,
              options: FleetOptions) -> list[MemberInfo]:
    from ray.exceptions import GetTimeoutError, RayActorError

    try:
        members = describe_members(ray, handles)
    except GetTimeoutError:
        raise UsageError(
            f"the actors of fleet {options.name!r} were not placed within {PLACE_TIMEOUT_S:.0f} s; each needs "
            f"{_resources(spec, options, ray.cluster_resources())} and the cluster has {ray.cluster_resources()}",
            "start nodes that offer them, ask for fewer actors, or fewer workers per actor") from None
    except RayActorError as exc:
        raise UsageError(f"a judge actor of fleet {options.name!r} failed to start: {exc}",
                         "check that every judge node has atrl and its backend installed") from None
    for name, member in zip(names, members, strict=True):
        theirs, ours = member.spec.comparable(), spec.comparable()
        # a setting this driver leaves at None takes the fleet's
        differing = [k for k in ours if ours[k] is not None and theirs[k] != ours[k]]
        if differing:
            diff = ", ".join(f"{k}: {theirs[k]!r} (asked {ours[k]!r})" for k in differing)
            raise UsageError(f"fleet {options.name!r} (actor {name}) judges with other settings: {diff}",
                             f"use the fleet's settings, another fleet name, or stop it: atrl fleet stop "
                             f"--fleet {options.name}")
    return members


def _common_backend(members: list[MemberInfo], options: FleetOptions) -> FleetBackend:
    kinds = {(m.backend, m.device, tuple(sorted(m.versions.items()))) for m in members}
    if len(kinds) > 1:
        listed = "; ".join(f"{b} on {d} ({dict(v)})" for b, d, v in sorted(kinds))
        raise UsageError(f"the actors of fleet {options.name!r} judge on different devices or versions: {listed}",
                         "start one fleet per kind of device (another fleet name), with the same installation")
    first = members[0]
    return FleetBackend(name=first.backend, platform=first.platform, timed=first.timed,
                        default_preset=first.default_preset, device=first.device,
                        library_versions=dict(first.versions), label=first.label)
