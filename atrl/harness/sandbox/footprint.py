"""A task's peak memory while it is judged, estimated before anything real is allocated.

The task's inputs, models and the reference forward are built on PyTorch's `meta` device, which
records shapes and dtypes without allocating, so a 4096 × 393216 fp32 input costs nothing here.
The estimate adds up what the judge holds at once (see `atrl.harness.stages.correctness` and `.profile`), in bytes:

- correctness, at the candidate's call: the case's inputs, the reference's copy of them and its
  output, the float64 copy of the inputs and the float64 output, the candidate's copy of the
  inputs, its previous (poisoned) output and the new one, plus the largest of: the forward's own
  temporaries (the reference's, measured on `meta`; the candidate is assumed to need as much),
  the input-mutation check's boolean masks, the sliced comparison's buffers;
- profile (timed backends): the timed inputs, fresh inputs, each side's copy and the expected
  inputs (five input sets), four outputs, the forward's temporaries and the L2 flush buffer;
- parameters of the reference, its float64 copy and the candidate (assumed as large as the
  reference's).

Where the reference forward cannot run on `meta` (it calls `.item()`, numpy, ...), the rule is
conservative: the output and the forward's temporaries are each taken as large as the inputs, and
the estimate is marked approximate (the pool then runs the job alone). Where even the inputs
cannot be built on `meta`, the footprint is unknown (the job runs alone with the whole device).
A task that defines no inputs at all has an empty footprint: the judge rejects it at compile.

This module holds the record and its arithmetic and imports no torch (the pool uses it);
`atrl.harness.sandbox.meta_estimate` measures a task on `meta` inside a worker.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass

from atrl.astnames import parse_source

# Elements per chunk of a comparison (`atrl.harness.stages.compare`) on a GPU, and the memory
# estimate's bound: its float64 temporaries stay near 1.6 GiB however large the output (a whole
# float64 copy of a 6 GiB fp32 output is 12 GiB), in few enough chunks that launching each chunk's
# ~100 operations does not dominate. On a CPU chunks that stay in cache are faster: 1.2 s against
# 4.3 s (2^23-element chunks) and 7.3 s (2^25) for 2^26 elements on 2 cores.
COMPARE_CHUNK_ELEMENTS = 1 << 25
COMPARE_CHUNK_ELEMENTS_CPU = 1 << 18
L2_FLUSH_BYTES = 256 * 1024 * 1024  # the cuda backend's cache-flush buffer (atrl.backends.cuda)
# the sliced comparison holds about six float64 buffers and four boolean masks of one chunk
COMPARE_BYTES_PER_ELEMENT = 6 * 8 + 4
FLOAT64_SLICES = 8  # the float64 reference in slices runs on 1/8 of the leading dimension at a time

Method = str  # "meta" | "meta-inputs" | "no-inputs" | "unknown"


@dataclass(frozen=True)
class Footprint:
    """The parts of a task's peak memory (bytes) and the estimate built from them.

    Input and output sizes are the largest case's; `inputs_all` sums every case (multi-case
    tasks build all of them at once). `peak` assumes the float64 reference is computed whole,
    `peak_sliced` that it is computed in `FLOAT64_SLICES` slices of the leading dimension.
    `method` says how the numbers were found (module docstring); `reason` why meta failed.
    The forward's temporaries are what it allocates beyond its output."""

    inputs: int
    inputs_all: int
    inputs64: int
    outputs: int
    outputs64: int
    forward_temporaries: int
    forward64_temporaries: int
    parameters: int
    parameters64: int
    largest_input_elements: int
    timed: bool
    method: Method
    reason: str = ""
    output_elements: int | None = None  # of the largest output tensor; None: bounded by its bytes

    @property
    def known(self) -> bool:
        return self.method != "unknown"

    @property
    def approximate(self) -> bool:
        return self.method in ("meta-inputs", "unknown")

    @property
    def float64_bytes(self) -> int:
        """What the whole float64 evaluation holds: its inputs, output, temporaries and model."""
        return self.inputs64 + self.outputs64 + self.forward64_temporaries + self.parameters64

    @property
    def peak(self) -> int:
        return self._peak(sliced=False)

    @property
    def peak_sliced(self) -> int:
        return self._peak(sliced=True)

    def _peak(self, sliced: bool) -> int:
        # held from the reference's call on: all cases' inputs, the reference's copy and output
        held = 2 * self.parameters + self.parameters64 + self.inputs_all + self.inputs + self.outputs
        mutation_masks = 3 * self.largest_input_elements  # (a == b), isnan(a) & isnan(b), their |
        # the comparison's buffers: one chunk, or the whole value when smaller (bytes bound elements)
        compared = max(self.outputs, self.inputs) if self.output_elements is None else max(
            self.output_elements, self.largest_input_elements)
        compare = COMPARE_BYTES_PER_ELEMENT * min(COMPARE_CHUNK_ELEMENTS, compared)
        after_call = max(self.forward_temporaries, mutation_masks, compare)
        # the candidate's call: its copy of the inputs, its previous (poisoned) output and the new one
        candidate = self.inputs + 2 * self.outputs
        whole64 = self.inputs64 + self.outputs64
        if sliced:
            one_slice = -(-(whole64 + self.forward64_temporaries) // FLOAT64_SLICES)
            correctness = held + candidate + max(after_call, one_slice + compare)
        else:
            correctness = max(held + whole64 + self.forward64_temporaries, held + whole64 + candidate + after_call)
        # wide trials build the widened cases beside the originals, with one float32 draw
        widening = 2 * self.parameters + 2 * self.inputs_all + 4 * self.largest_input_elements
        peak = max(correctness, widening)
        if self.timed:
            profile = (2 * self.parameters + 2 * self.inputs_all + 3 * self.inputs + 4 * self.outputs
                       + max(self.forward_temporaries, compare) + L2_FLUSH_BYTES)
            peak = max(peak, profile)
        return peak

    def parts_text(self) -> str:
        """The main parts, for messages: "inputs 6.00 GiB, outputs 6.00 GiB, ..."."""
        if not self.known:
            return f"unknown ({self.reason})" if self.reason else "unknown"
        parts = [("inputs", self.inputs), ("outputs", self.outputs),
                 ("float64 reference", self.float64_bytes), ("forward temporaries", self.forward_temporaries),
                 ("parameters", self.parameters)]
        text = ", ".join(f"{name} {size_text(value)}" for name, value in parts if value)
        return text + (" (approximate: the reference forward does not run on meta)" if self.approximate else "")


def size_text(n: int | float) -> str:
    """Bytes as text in the largest fitting binary unit: "6.00 GiB", "256.0 MiB", "12 KiB"."""
    if abs(n) >= 1 << 30:
        return f"{n / (1 << 30):.2f} GiB"
    if abs(n) >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n / (1 << 10):.0f} KiB"


def empty_footprint(timed: bool, method: str = "no-inputs", reason: str = "") -> Footprint:
    """A footprint with no parts: a task without inputs, or one that could not be measured."""
    return Footprint(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, timed, method, reason)


def defines_inputs(source: str, multi_case: bool) -> bool:
    """Whether a task's source defines its input function (read, not executed)."""
    wanted = "get_input_groups" if multi_case else "get_inputs"
    try:
        tree = parse_source(source)
    except SyntaxError:
        return True  # let the measurement, then the judge, report the broken source
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == wanted
               for node in tree.body)


def footprint_key(task, preset: str | None, timed: bool) -> str:
    """Cache key of a task's footprint: its id, the source at the preset, the dtype, timed."""
    digest = hashlib.sha256(task.source_at(preset).encode()).hexdigest()[:16]
    return f"{task.id}|{preset}|{task.dtype}|{task.multi_case}|{timed}|{digest}"
