"""The seed the correctness trials draw their inputs from: the harness's `seed` mixed with a
secret of this machine, so a candidate cannot know its inputs in advance.

With a plain seed (0 by default) every trial's inputs could be replayed by the candidate itself:
a `ModelNew` that draws them in `__init__`, computes the outputs there and only looks them up in
`forward` passed every trial without computing anything (`tests/harness/test_trial_seed.py`).
Mixed with a secret the seeds stay reproducible on one machine (the verdict cache and resumed
runs see the same inputs) but cannot be derived by code that does not know the secret. The
secret is `$ATRL_JUDGE_SECRET` when set (to reproduce another machine's trials), else random
bytes kept in `~/.cache/atrl/judge-secret`, created on first use; only the caller's side reads it,
workers receive the mixed seed.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import tempfile
import warnings
from pathlib import Path

SECRET_ENV = "ATRL_JUDGE_SECRET"


def secret_file() -> Path:
    return Path.home() / ".cache" / "atrl" / "judge-secret"


def judge_secret() -> str:
    """The secret mixed into trial seeds (see the module docstring)."""
    configured = os.environ.get(SECRET_ENV)
    if configured:
        return configured
    path = secret_file()
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    except OSError as exc:
        return _process_secret(f"{path} cannot be read ({exc})")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".judge-secret.")
    except OSError as exc:
        return _process_secret(f"{path} cannot be created ({exc})")
    with os.fdopen(fd, "w") as handle:  # mkstemp's file is readable by its owner only
        handle.write(secrets.token_hex(32) + "\n")
    try:
        os.link(tmp, path)  # atomic and never replaces: a concurrent first use keeps one secret
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    return path.read_text().strip()


_process: list[str] = []


def _process_secret(why: str) -> str:
    """A secret for this process only: trials stay unknowable, but a later run (or a resumed
    one) judges with other inputs. Said once."""
    if not _process:
        _process.append(secrets.token_hex(32))
        warnings.warn(f"{why}: trial inputs use a secret of this process only; set {SECRET_ENV} to keep "
                      "them the same across runs", stacklevel=3)
    return _process[0]


def trial_seed(seed: int) -> int:
    """The base seed the judge's trials use for the harness seed `seed` (63 bits)."""
    digest = hashlib.sha256(f"{judge_secret()}:{seed}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
