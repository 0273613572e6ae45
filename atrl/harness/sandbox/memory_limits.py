"""A job's memory allowance, enforced in its worker, measured, and explained when exceeded.

On a GPU the allowance is PyTorch's per-process cap (`set_per_process_memory_fraction`, set
again for every job); on the CPU it is the soft address-space limit (RLIMIT_AS): the worker's
address space at the job's start plus the allowance, never below the configured baseline (which
leaves the interpreter its usual room), never above the hard limit set when the worker started.
Peak use is measured per job: the allocator's peak reservation on a GPU, the growth of the
resident set on the CPU (`/proc/self/status` VmHWM, reset through `/proc/self/clear_refs`).

`CURRENT` is the running job's budget, for the judge (it computes the float64 reference in
slices when the budget says so).
"""

from __future__ import annotations

import re
import resource
import sys
from dataclasses import dataclass

from atrl.harness.sandbox.admission import ALLOWANCE_FLOOR, ALLOWANCE_SLACK, MemoryBudget, allowance_for
from atrl.harness.sandbox.footprint import size_text

CURRENT: MemoryBudget | None = None

_UNITS = {"B": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
# the size of the allocation that failed, as torch (CUDA, CPU) and numpy word it
_REQUEST = re.compile(r"(?:[Tt]ried to allocate|Unable to allocate) ([\d.]+) ?(B|bytes|KiB|MiB|GiB|TiB)")
# the device's free memory at the failure, as CUDA's caching allocator words it
_FREE = re.compile(r"of which ([\d.]+) ?(B|bytes|KiB|MiB|GiB|TiB) is free")


def current_budget() -> MemoryBudget | None:
    return CURRENT


def _status_bytes(field: str) -> int | None:
    """A `/proc/self/status` size field (kB) in bytes; None where there is no such file."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def host_available_bytes() -> int | None:
    """The host's available memory (`MemAvailable` of /proc/meminfo), None where unknown."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def device_free_bytes(on_gpu: bool) -> int | None:
    """Free memory of this worker's device: its GPU's (CUDA initialised) or the host's."""
    torch = sys.modules.get("torch")
    if on_gpu:
        if torch is None or not torch.cuda.is_available():
            return None
        return int(torch.cuda.mem_get_info()[0])
    return host_available_bytes()


def address_space_limit(baseline: int, address_space_now: int, allowance: int, hard: int | None) -> int:
    """The soft RLIMIT_AS of a job: what the worker maps now plus the allowance, at least the
    baseline, at most the hard limit."""
    limit = max(baseline, address_space_now + allowance)
    return min(limit, hard) if hard is not None else limit


@dataclass
class JobMemory:
    """The allowance a worker applied to one job (bytes) and how to read its peak use."""

    allowance: int | None
    on_gpu: bool
    start_resident: int = 0

    def peak_bytes(self) -> int | None:
        if self.on_gpu:
            import torch

            return int(torch.cuda.max_memory_reserved())
        resident = _status_bytes("VmHWM")
        return None if resident is None else max(0, resident - self.start_resident)

    def report(self) -> dict[str, int | None]:
        return {"enforced_bytes": self.allowance, "peak_bytes": self.peak_bytes()}


def enforce(budget: MemoryBudget | None, on_gpu: bool, address_space_baseline: int | None) -> JobMemory | None:
    """Apply `budget` to this worker for the next job (None: leave the limits as they are).
    `on_gpu`: a GPU worker; `address_space_baseline`: the configured RLIMIT_AS of a CPU worker
    (None: no address-space limit, so none is set per job either)."""
    global CURRENT
    CURRENT = budget
    if budget is None:
        return None
    torch = sys.modules.get("torch")
    if on_gpu:
        if torch is None or not torch.cuda.is_available():
            return JobMemory(None, on_gpu=False)
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, budget.allowance / total))
        torch.cuda.reset_peak_memory_stats()
        return JobMemory(min(budget.allowance, total), on_gpu=True)
    if address_space_baseline is None:
        return JobMemory(None, on_gpu=False)
    now = _status_bytes("VmSize") or 0
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    limit = address_space_limit(address_space_baseline, now, budget.allowance,
                                None if hard == resource.RLIM_INFINITY else hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # resets VmHWM to the current resident set
    except OSError:
        pass
    return JobMemory(limit - now, on_gpu=False, start_resident=_status_bytes("VmRSS") or 0)


def _size(pattern: re.Pattern[str], message: str) -> int | None:
    match = pattern.search(message)
    return int(float(match.group(1)) * _UNITS[match.group(2)]) if match else None


def failed_request_bytes(message: str) -> int | None:
    """The size of the allocation an out-of-memory message says failed, when it says."""
    return _size(_REQUEST, message)


def squeezed_by_others(report: dict | None, allowance: int, message: str) -> bool:
    """Whether a GPU out-of-memory came while the job stayed inside its allowance, so that the
    device itself had no room: memory held by another process, not this candidate. The numbers
    decide, not the words (CUDA's allocator names the per-process cap, "N allowed;", whenever one
    is set, whichever refused): the cap refuses when the job's reserved peak plus the request
    passes it; the device, when its free memory is below the request."""
    if "CUDA out of memory" not in message:
        return False
    peak = (report or {}).get("peak_bytes")
    request = failed_request_bytes(message)
    if peak is None or request is None:
        return False
    if peak + request > ((report or {}).get("enforced_bytes") or allowance):
        return False
    free = _size(_FREE, message)
    return free is None or free < request


def squeezed_message(budget: MemoryBudget, report: dict | None, original: str) -> str:
    """The `device-busy` message: what the job used, what it was allowed, what the device had
    free, and that the fix is on the judge's side."""
    allowance = (report or {}).get("enforced_bytes") or budget.allowance
    peak = (report or {}).get("peak_bytes") or 0
    request = failed_request_bytes(original) or 0
    free = _FREE.search(original)
    free_text = f", with {free.group(1)} {free.group(2)} free on the device" if free else ""
    return "\n".join([
        f"the GPU ran out of memory while this job stayed inside its allowance: a request of "
        f"{size_text(request)} failed with {size_text(peak)} in use (peak) against an allowance of "
        f"{size_text(allowance)}{free_text}. Another process holds the device's memory; this is not "
        f"the candidate's fault.",
        "Judge it again on a GPU the judge has to itself, or give the judge a share it can count on "
        "(`memory_gib` for eval, `harness_memory_gib` for training).",
        original.strip()]).strip()


def overrun_message(budget: MemoryBudget, report: dict | None, original: str) -> str:
    """The out-of-memory message: the task's estimate, the allowance, and by how much the
    candidate went over it (the failed request on top of the peak in use, where known)."""
    allowance = (report or {}).get("enforced_bytes") or budget.allowance
    peak = (report or {}).get("peak_bytes")
    request = failed_request_bytes(original)
    enforced = "" if allowance == budget.allowance else (
        f"; enforced as {size_text(allowance)}, the worker's limit, which the baseline makes larger")
    lines = [f"the candidate needed more memory than this task allows: {budget.describe()}{enforced}."]
    if request is not None and peak is not None:
        over = max(0, peak + request - allowance)
        lines.append(f"A request of {size_text(request)} failed with {size_text(peak)} in use (peak) against an allowance "
                     f"of {size_text(allowance)}: about {size_text(over)} over the allowance.")
    elif request is not None:
        lines.append(f"A request of {size_text(request)} failed against an allowance of {size_text(allowance)}: "
                     f"at least {size_text(max(0, request - allowance))} over it even with nothing else in use.")
    elif peak is not None:
        lines.append(f"Peak in use {size_text(peak)} against an allowance of {size_text(allowance)}.")
    if budget.alone and allowance_for(budget.estimate) > allowance:
        lines.append(f"The judge's whole memory ({size_text(allowance)}) is below what judging this task may take "
                     f"(estimate × {ALLOWANCE_SLACK:g} + {size_text(ALLOWANCE_FLOOR)} = "
                     f"{size_text(allowance_for(budget.estimate))}): a kernel that uses no more than the reference may "
                     "not fit either. Give the judge more memory (`memory_gib` for eval, `harness_memory_gib` for "
                     "training) or a larger GPU.")
    return "\n".join([*lines, original.strip()]).strip()
