"""The triton-ascend environment: a virtual environment of its own, because triton-ascend installs
as the `triton` package and must never share a process with stock Triton.

Location: `$ATRL_ASCEND_ENV`, else `~/.cache/atrl/envs/ascend`. `atrl setup ascend` creates it
(`create_env`): a venv with torch first (`TORCH_REQUIREMENT`, so pip keeps that build), then
triton-ascend and what its interpreter and our worker import (`ASCEND_REQUIREMENTS`), and this
project importable through a `.pth` file naming a folder that holds only a link to the `atrl`
package (never the caller's site-packages, which hold stock Triton). A `atrl-ascend.json`
marker records the versions installed; its presence means the environment is ready.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from atrl.errors import UsageError

ENV_VARIABLE = "ATRL_ASCEND_ENV"
DEFAULT_LOCATION = Path("~/.cache/atrl/envs/ascend")
TORCH_REQUIREMENT = "torch==2.13.0"
# numpy 2.4 turned int() of a one-element array into an error, which triton-ascend 3.2's interpreter
# relies on for every scalar kernel argument used as a loop bound.
ASCEND_REQUIREMENTS = ("triton-ascend==3.2.0", "pybind11", "numpy<2.4", "pyyaml")
MARKER = "atrl-ascend.json"
PTH_FILE = "atrl-project.pth"
LINK_DIR = "atrl-project"
SETUP_COMMAND = "atrl setup ascend"
# What the worker imports at start: triton-ascend's own package and the harness's worker module.
_CHECK_SNIPPET = ("import json, platform, torch, triton, importlib.metadata as m, atrl.harness.sandbox.worker; "
                  "print(json.dumps({'torch': torch.__version__, 'triton': triton.__version__, "
                  "'triton-ascend': m.version('triton-ascend'), 'python': platform.python_version()}))")


_PROJECT_LINK: Path | None = None


def project_link() -> Path:
    """A folder of this process's own, holding only a link to the `atrl` package it imported: the
    workers put it first on their path, so they run this checkout's harness whichever checkout
    last ran `atrl setup ascend` (the environment's own link points at that one)."""
    global _PROJECT_LINK
    if _PROJECT_LINK is None or not (_PROJECT_LINK / "atrl").exists():
        import atexit
        import shutil
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="atrl-ascend-project-"))
        _link_package(folder)
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _PROJECT_LINK = folder
    return _PROJECT_LINK


def env_dir() -> Path:
    """Where the environment lives: `$ATRL_ASCEND_ENV` or `~/.cache/atrl/envs/ascend`."""
    configured = os.environ.get(ENV_VARIABLE)
    return Path(configured or DEFAULT_LOCATION).expanduser()


def env_python(root: Path | None = None) -> Path:
    """The environment's interpreter."""
    root = root or env_dir()
    return root / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def inside_env(root: Path | None = None) -> bool:
    """Whether this process runs on the environment's interpreter (a worker does)."""
    root = (root or env_dir()).resolve()
    return Path(sys.prefix).resolve() == root


@dataclass(frozen=True)
class EnvState:
    root: Path
    versions: dict[str, str]


def read_env(root: Path | None = None) -> EnvState | None:
    """The ready environment at `root` (default `env_dir()`), or None when it is absent or unfinished."""
    root = root or env_dir()
    marker = root / MARKER
    if not (marker.is_file() and env_python(root).exists()):
        return None
    try:
        versions = json.loads(marker.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return EnvState(root=root, versions={str(k): str(v) for k, v in dict(versions).items()})


def require_env() -> EnvState:
    """The ready environment, or a `UsageError` naming the command that creates it."""
    state = read_env()
    if state is None:
        root = env_dir()
        raise UsageError(f"the triton-ascend environment is missing at {root} ({ENV_VARIABLE} sets its location)",
                         f"create it with `{SETUP_COMMAND}`")
    return state


def _site_packages(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True)
    return Path(out.stdout.strip())


def _link_package(holder: Path) -> None:
    """`holder/atrl`: a link to the `atrl` package this process imported (re-pointed if it differs)."""
    import atrl

    package = Path(atrl.__file__).resolve().parent
    holder.mkdir(parents=True, exist_ok=True)
    link = holder / "atrl"
    if not (link.is_symlink() and link.resolve() == package):
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(package, target_is_directory=True)


def link_project(root: Path) -> Path:
    """Make this project's `atrl` package importable in the environment (re-pointed on every call,
    so a moved checkout is followed). Returns the `.pth` file written."""
    holder = root / LINK_DIR
    _link_package(holder)
    pth = _site_packages(env_python(root)) / PTH_FILE
    pth.write_text(f"{holder}\n")
    return pth


def _pip(python: Path, args: list[str], log: Callable[[str], None]) -> None:
    log(f"pip install {' '.join(args)}")
    result = subprocess.run([str(python), "-m", "pip", "install", "-q", *args], capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-15:])
        raise UsageError(f"pip could not install {' '.join(args)} into {python.parent.parent}:\n{tail}",
                         "check that pip can reach a package index (or its find-links), then run "
                         f"`{SETUP_COMMAND}` again")


def check_env(root: Path) -> dict[str, str]:
    """Import triton-ascend and the worker in the environment; returns the versions found."""
    result = subprocess.run([str(env_python(root)), "-c", _CHECK_SNIPPET], capture_output=True, text=True,
                            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-8:])
        raise UsageError(f"the triton-ascend environment at {root} does not import:\n{tail}",
                         f"recreate it with `{SETUP_COMMAND} --force`")
    return json.loads(result.stdout.strip().splitlines()[-1])


def create_env(root: Path | None = None, force: bool = False,
               log: Callable[[str], None] = lambda _: None) -> tuple[EnvState, bool]:
    """Create (or finish) the environment at `root`. Returns (its state, whether anything was
    installed). Idempotent: a ready environment only gets its project link refreshed and checked."""
    root = (root or env_dir()).expanduser().resolve()
    ready = read_env(root)
    if ready is not None and not force:
        link_project(root)
        check_env(root)
        return ready, False
    start = time.monotonic()
    (root / MARKER).unlink(missing_ok=True)
    if force or not env_python(root).exists():
        log(f"creating a virtual environment at {root}")
        venv.EnvBuilder(with_pip=True, clear=force, symlinks=sys.platform != "win32").create(root)
    python = env_python(root)
    _pip(python, [TORCH_REQUIREMENT], log)
    _pip(python, [*ASCEND_REQUIREMENTS], log)
    link_project(root)
    versions = check_env(root)
    versions["created_seconds"] = f"{time.monotonic() - start:.1f}"
    versions["host_python"] = platform.python_version()
    (root / MARKER).write_text(json.dumps(versions, indent=1) + "\n")
    return EnvState(root=root, versions=versions), True
