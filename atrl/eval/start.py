"""The start of an eval run: every check that needs the disk, the task suites or the policy spec,
done before anything is loaded or written, and the undoing of a start that failed anyway.

`check_start(config, out)` raises a one-line `UsageError` naming the flag (or config key) at
fault, in about a second instead of after the model has loaded. `undo_failed_start(out)` wraps
the run: if it fails before anything was journaled, the files it created in `out` are removed,
so the corrected command starts cleanly instead of being refused as "another configuration".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from atrl.errors import UsageError
from atrl.eval.config import EvalConfig

CONFIG_FILE = "config.yaml"


def check_start(config: EvalConfig, out: Path) -> None:
    """Raise UsageError for anything that would stop the run `config` describes in `out`."""
    _check_out(config, out)
    _check_files(config)
    _check_policy(config)
    _check_tasks(config)
    from atrl.harness.select import check_harness_available, parse_harness

    if parse_harness(config.harness).ray:
        check_harness_available(config.harness)  # the fleet's nodes hold the backend's devices
        return
    from atrl.backends import default_backend_for_suite, resolve_backend

    # e.g. --backend cuda on a machine without a GPU, or ascend without its environment
    resolve_backend(default_backend_for_suite(config.suite, config.backend))


def _check_out(config: EvalConfig, out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file", "pass a directory for the run (it is created if missing)")
    saved_path = out / CONFIG_FILE
    if not saved_path.exists():
        return
    from atrl.rl.config import parse_yaml

    saved = parse_yaml(saved_path.read_text(), str(saved_path)) or {}
    if not isinstance(saved, dict):
        raise UsageError(f"{saved_path} is not the configuration of a run",
                         f"pass another --out, or remove {out} to start fresh there")
    config.check_resumable(saved, out)


def _check_files(config: EvalConfig) -> None:
    if config.path is not None and not Path(config.path).expanduser().is_dir():
        raise UsageError(f"{config.name_of('path')} {config.path} is not a directory",
                         f"pass the {config.suite} checkout's directory")
    if config.split is not None and not Path(config.split).is_file():
        raise UsageError(f"{config.name_of('split')} {config.split} does not exist",
                         "pass a split file such as configs/split-builtin.yaml")


def _check_policy(config: EvalConfig) -> None:
    """The spec's form, the file or model it names, and --engine only with a local model."""
    from atrl.policy import parse_policy_spec

    try:
        spec = parse_policy_spec(config.policy)
    except UsageError as exc:
        raise UsageError(f"{config.name_of('policy')}: {exc.problem}", exc.fix) from None
    if config.engine is not None and not spec.is_hf:
        raise UsageError(f"{config.name_of('engine')} {config.engine} applies to hf policies, not {config.policy!r}",
                         "drop --engine, or use --policy hf:DIR / smollm2-135m-triton")
    target = Path(spec.target).expanduser()
    if spec.kind == "replay" and not target.is_file():
        raise UsageError(f"{config.name_of('policy')}: replay file {target} does not exist",
                         "pass replay:FILE with a JSONL of responses")
    if spec.kind == "hf" and not (target.is_dir() or (target.is_file() and target.suffix == ".gguf")):
        raise UsageError(f"{config.name_of('policy')}: no model at {target}",
                         "pass hf:DIR (a transformers model directory) or hf:FILE.gguf")
    if spec.kind in ("smollm2-135m", "smollm2-135m-triton"):
        from atrl.policy.hf import shipped_adapter_dir, smollm2_gguf_path

        smollm2_gguf_path()  # the package that ships the weights file is installed
        if spec.kind == "smollm2-135m-triton":
            shipped_adapter_dir()  # and the package data holds the adapter


def _check_tasks(config: EvalConfig) -> None:
    """The selection holds tasks (unknown ids are named), and each has the --preset asked for."""
    from atrl.eval.runner import select_tasks

    tasks = select_tasks(config)
    if config.preset is None:
        return
    lacking = [t for t in tasks if t.presets and config.preset not in t.presets]
    if lacking:
        have = ", ".join(sorted(lacking[0].presets))
        raise UsageError(f"{config.name_of('preset')} {config.preset}: task {lacking[0].id} has no such preset",
                         f"choose one of {have}")


@contextmanager
def undo_failed_start(out: Path) -> Iterator[None]:
    """Run the body; when it raises before journaling anything (every file it created in `out`
    is empty, but the configuration), remove what it created, `out` itself included."""
    existed = out.exists()
    before = {p.name for p in out.iterdir()} if existed else set()
    try:
        yield
    except BaseException:
        created = [p for p in out.iterdir() if p.name not in before] if out.is_dir() else []
        if all(_holds_no_result(p) for p in created):
            for path in created:
                if path.is_dir():
                    path.rmdir()
                else:
                    path.unlink()
            if not existed and out.is_dir() and not any(out.iterdir()):
                out.rmdir()
        raise


def _holds_no_result(path: Path) -> bool:
    """The run's configuration, an empty journal or an empty folder: nothing a resume would keep."""
    if path.name == CONFIG_FILE:
        return True
    if path.is_dir():
        return not any(path.iterdir())
    return path.is_file() and path.stat().st_size == 0
