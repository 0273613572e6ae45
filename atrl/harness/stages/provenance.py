"""Who computed the result: the data path of one forward call, recorded on every backend.

`ProvenanceRecorder` is a `TorchDispatchMode` entered around the candidate's forward and, through
the launch hook, an observer of its Triton launches. Every aten op that produces or writes tensor
data becomes an `Event` of one kind:

- `constant`: allocation and fills (`empty`, `zeros_like`, `fill_`, random draws) — no data in;
- `copy`: data movement that keeps values (`clone`, `copy_`, `_to_copy`: layout, dtype, device);
- `torch`: any other op that makes data — PyTorch compute, with its bytes moved and FLOPs;
- `triton`: a Triton launch; it reads and may write every tensor argument (the interpreter indeed
  copies every argument's storage back), so it counts as a writer of all of them;
- `input` / `state`: the forward's inputs and the tensors the module holds when the call starts;
- `python-constant`: a small tensor built from Python values (`torch.tensor(0.5)`), or made by a
  PyTorch op from such tensors alone (`torch.tensor(x.shape[:d]).prod()`: shape arithmetic); it
  counts as `untracked` on the path of an output that has no more elements than it (a result, not a
  parameter: `torch.tensor([loss])`);
- `untracked`: data no recorded event produced — a tensor made from numpy or Python values, or
  a buffer whose bytes changed between recorded events (written through a numpy view).

The bytes an event moves count each tensor it reads once and each tensor it writes once, so an
in-place op (`h.sub_(v)`, `torch.mul(h, 2, out=h)`) counts what its out-of-place form does: its target
is read and written. A launch reads the arguments that hold data (not a buffer only allocated or
filled) and writes those whose storage changed. The reference's own work is recorded by the same
rule, so shares compare like with like.

Views and metadata ops (outputs that share an input's storage, `size`, `item`) are no events.
Each storage (keyed by device and data pointer) keeps the events that wrote it since it was
allocated, and each event the writers of what it read, so the events behind an output — its
data path — are found by walking back from the output's storage. A fingerprint of each storage
is taken after every recorded write and compared before every recorded read and at the end, so
a write that bypassed PyTorch's dispatcher and Triton's launcher shows up as `untracked`.
Values read to the host (`.item()`, `.tolist()`, `.numpy()`; the last two dispatch no aten op and
are wrapped) may flow anywhere afterwards, so the events behind them count as being on every
output's data path; reading as many elements to the host as the output has counts as `untracked`
data: the result can come back through Python scalars that no tensor carries.
Small Python constants are constants only while their elements, summed over the output's data
path, stay below the output's: many 64-element constants carry a result as well as one large one.
A launch's own work (the launcher's copies, an autotuner's benchmark runs) is not recorded, but
what the candidate's own code does inside it is: an autotuner's `pre_hook`, a heuristic's value
function, a grid function, Python that the interpreter runs from a kernel body. A same-size
`resize_` keeps its data and its writers (it is no allocation).

`decide` turns a record into a verdict under a compute policy: `strict` rejects any PyTorch
compute on the data path; `partial` requires the Triton share of the work — one minus the bytes
moved by PyTorch ops on the data path over the bytes moved by the reference's own ops — to reach
the threshold. Library kernels the reference itself runs (GEMM, convolution, attention:
`LIBRARY_OPS`) may stay in PyTorch under `partial`, as KernelBench's fusion tasks intend (a
candidate that keeps a 137 GFLOP GEMM in PyTorch and fuses its epilogue in Triton): those that
solve one of the reference's own library problems (the same GEMM shapes, `library_signature`), up
to the reference's library bytes, are left out of both sides, and the share is measured over the
rest of the reference's work; a GEMM of other shapes is PyTorch doing other work. Under both, data from outside PyTorch and Triton, or an output no Triton launch
contributed to in this call, is rejected.

Where the reference's own work is data movement only (a transpose or permutation materialised with
`.contiguous()`: copies and no compute), copying *is* the task: copies on the candidate's data path
then count as PyTorch doing the work, under both policies. Otherwise a copy is layout work around
the candidate's kernels and stays free. (A Triton launch counts as a writer of all its arguments,
so without this rule `y = x.t().contiguous()` followed by a kernel that writes nothing passed a
transpose task.)
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import flop_registry

from atrl.harness.stages.compare import Mismatch

StorageKey = tuple[str, int, int]  # device type, device index (-1: none), storage data pointer

CONSTANT_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "fill", "fill_", "zero",
    "zero_", "scalar_tensor", "arange", "linspace", "logspace", "eye", "rand", "rand_like", "randn",
    "randn_like", "randint", "randint_like", "randperm", "normal_", "uniform_", "random_",
})
# Ops that change a tensor's size and keep its data (a same-size `resize_` is a no-op on the data):
# the storage keeps its writers, and moves them along when it is reallocated to grow
RESIZE_OPS = frozenset({"resize_", "resize_as_"})
COPY_OPS = frozenset({
    "copy", "copy_", "_copy_from", "_copy_from_and_resize", "clone", "_to_copy", "lift_fresh_copy",
    "detach_copy", "alias_copy", "view_copy", "_reshape_copy", "expand_copy", "permute_copy", "t_copy",
    "transpose_copy", "slice_copy", "select_copy", "unsqueeze_copy", "squeeze_copy", "as_strided_copy",
    "narrow_copy", "unfold_copy", "_pin_memory", "_to_dense", "to_dense",
})
# In-place ops that change only a tensor's metadata (the schema marks them as writes)
METADATA_INPLACE_OPS = frozenset({
    "t_", "transpose_", "squeeze_", "unsqueeze_", "as_strided_", "swapdims_", "swapaxes_", "detach_",
})
HOST_READ_OPS = frozenset({"_local_scalar_dense", "equal", "is_nonzero", "allclose"})
# Allocations whose memory is not written: a block handed out again still holds what was there (on
# a GPU the caching allocator hands a freed PyTorch result to the next request of its size)
UNINITIALISED_OPS = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})
# What Triton's launchers do with tensors themselves (the interpreter's host copies, an autotuner's
# resets and restores): they allocate, copy, view and re-point storages, and never compute
LAUNCHER_OPS = CONSTANT_OPS | COPY_OPS | RESIZE_OPS | METADATA_INPLACE_OPS | {"set_", "detach", "lift_fresh"}
# A Python constant (`torch.tensor(0.5)`) passed along is no computation of the result as long
# as it is small and smaller than the output (see `decide`); a larger one carries the result itself.
MAX_CONSTANT_ELEMENTS = 64
_ROW_WORDS = 1024  # a fingerprint views a storage as rows of this many words


@dataclass(frozen=True)
class Event:
    """One recorded step: what ran (`kind`, `name`), the work it did, the events it read from."""

    index: int
    kind: str  # input | state | constant | python-constant | copy | torch | triton | untracked
    name: str
    bytes: int = 0
    flops: int = 0
    deps: tuple[int, ...] = ()
    elements: int = 0  # of a python-constant
    signature: tuple = ()  # of a library op: the problem it solves (`library_signature`)


@dataclass(frozen=True)
class Work:
    """Bytes moved and FLOPs of a set of PyTorch compute events; `library_bytes`: the part of
    `bytes` moved by library kernels (`LIBRARY_OPS`); `copy_bytes`: bytes moved by copies (not
    part of `bytes`)."""

    bytes: int = 0
    flops: int = 0
    library_bytes: int = 0
    copy_bytes: int = 0
    library_signatures: tuple = ()  # one per library op, sorted

    @property
    def movement_only(self) -> bool:
        """Whether this work is data movement alone: copies, no compute."""
        return self.bytes == 0 and self.copy_bytes > 0


# Library kernels (as the dispatcher sees them: `linear` and `matmul` arrive as these) that a
# `partial`-policy candidate may leave in PyTorch where the reference runs them too.
LIBRARY_OPS = frozenset({
    "aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm", "aten.convolution", "aten._convolution",
    "aten.cudnn_convolution", "aten.cudnn_convolution_transpose", "aten.mkldnn_convolution",
    "aten.convolution_overrideable", "aten._scaled_dot_product_flash_attention",
    "aten._scaled_dot_product_efficient_attention", "aten._scaled_dot_product_cudnn_attention",
    "aten._scaled_dot_product_flash_attention_for_cpu",
})


@dataclass(frozen=True)
class ProvenanceRule:
    """The compute policy ("strict" | "partial") and the Triton share `threshold` under partial."""

    policy: str
    threshold: float


def _storage_key(tensor: torch.Tensor) -> StorageKey | None:
    if tensor.device.type == "meta":
        return None
    storage = tensor.untyped_storage()
    if storage.nbytes() == 0:
        return None
    return (tensor.device.type, -1 if tensor.device.index is None else tensor.device.index, storage.data_ptr())


def _tensors(values: Iterable[object]) -> list[torch.Tensor]:
    """Tensors among `values`, looking into tuples, lists and Triton tensor descriptors."""
    found: list[torch.Tensor] = []
    for value in values:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(_tensors(value))
        elif isinstance(getattr(value, "base", None), torch.Tensor):
            found.append(value.base)
    return found


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _traffic(read: Iterable[torch.Tensor], written: Iterable[torch.Tensor]) -> int:
    """Bytes an op moves: each tensor it reads once plus each tensor it writes once. A tensor both
    read and written (an in-place op's target) counts twice, so `h.relu_()` moves as many bytes as
    `torch.relu(h)`, and an op's count does not depend on whether it writes in place."""
    return sum(_nbytes(t) for group in (read, written) for t in {id(t): t for t in group}.values())


def _weighted_sum(values: torch.Tensor) -> torch.Tensor:
    """Σ (i + 1)·values[i] in int64 (wrapping on overflow), on the values' device."""
    weights = torch.arange(1, values.numel() + 1, dtype=torch.int64, device=values.device)
    return (values.to(torch.int64) * weights).sum()


def fingerprint(tensor: torch.Tensor) -> tuple[int, ...]:
    """Sums over the 32-bit words (or bytes) of `tensor`'s whole storage which change when any
    byte changes or words move, except in contrived collisions: the words viewed as rows of
    `_ROW_WORDS`, their row sums and column sums each weighted by position, plus the plain sum and
    the leftover words. Two reductions read the storage once each with no copy of it (an int64
    copy of a 6 GiB buffer in chunks cost the judge seconds per call); one read at the end."""
    with _harness_work():
        return _fingerprint(tensor)


def _fingerprint(tensor: torch.Tensor) -> tuple[int, ...]:
    storage = tensor.untyped_storage()
    raw = torch.empty(0, dtype=torch.uint8, device=tensor.device).set_(storage)
    words = raw.view(torch.int32) if raw.numel() % 4 == 0 else raw
    body = words.numel() - words.numel() % _ROW_WORDS
    tail = words[body:]
    parts = [tail.sum(dtype=torch.int64), _weighted_sum(tail)]
    if body:
        grid = words[:body].view(-1, _ROW_WORDS)
        rows = grid.sum(dim=1, dtype=torch.int64)
        parts += [rows.sum(), _weighted_sum(rows), _weighted_sum(grid.sum(dim=0, dtype=torch.int64))]
    return tuple(torch._C.TensorBase.tolist(torch.stack(parts)))  # no host read of the candidate's


def poison(tensor: torch.Tensor) -> None:
    """Overwrite `tensor` with NaN (integers: their max value; booleans: their negation): an output
    the candidate returned earlier before the next call, an uninitialised allocation of its own."""
    with torch.no_grad():
        try:
            if tensor.is_floating_point() or tensor.is_complex():
                tensor.fill_(float("nan"))
            elif tensor.dtype == torch.bool:
                tensor.logical_not_()
            else:
                tensor.fill_(torch.iinfo(tensor.dtype).max)
        except RuntimeError:
            # expanded/overlapping views cannot be written; their base was poisoned if returned
            pass


def _flops(func, args: tuple, kwargs: dict, out: object, outputs: list[torch.Tensor]) -> int:
    counter = flop_registry.get(func.overloadpacket)
    if counter is not None:
        return int(counter(*args, **kwargs, out_val=out))
    return max((t.numel() for t in outputs), default=0)


def _split_arguments(func, args: tuple, kwargs: dict) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """`func`'s tensor arguments that its schema does not mark as written, and those it marks as
    written (`Tensor(a!)`: in-place and out=). By position, not identity: in
    `torch.mul(h, 2, out=h)` the first `h` is an operand read and the second a result written."""
    others: list[torch.Tensor] = []
    written: list[torch.Tensor] = []
    for position, argument in enumerate(func._schema.arguments):
        value = args[position] if position < len(args) else kwargs.get(argument.name)
        is_write = argument.alias_info is not None and argument.alias_info.is_write
        (written if is_write else others).extend(_tensors([value]))
    return others, written


def _own_type(value: object) -> bool:
    """An object of a class the candidate defined (not of Python, torch, triton or numpy)."""
    package = type(value).__module__.split(".")[0]
    return package not in ("builtins", "torch", "triton", "numpy", "types", "functools", "typing")


def module_tensors(root: object, depth: int = 4) -> list[torch.Tensor]:
    """Tensors held by a module (parameters, buffers, attributes, in containers and submodules)."""
    found: list[torch.Tensor] = []
    seen: set[int] = set()

    def visit(value: object, level: int) -> None:
        if id(value) in seen or level < 0:
            return
        seen.add(id(value))
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item, level - 1)
        elif isinstance(value, (list, tuple, set)):
            for item in value:
                visit(item, level - 1)
        elif isinstance(value, torch.nn.Module):
            found.extend(value.parameters())
            found.extend(value.buffers())
            for item in vars(value).values():
                visit(item, level - 1)
        elif hasattr(value, "__dict__") and not isinstance(value, type) and _own_type(value):
            for item in vars(value).values():
                visit(item, level - 1)

    visit(root, depth)
    return found


class ProvenanceRecorder(TorchDispatchMode):
    """Records the events of one call (see the module docstring). `verify_writes=False` skips the
    fingerprints (for the reference, whose work is all that is wanted)."""

    def __init__(self, verify_writes: bool = True) -> None:
        super().__init__()
        self.verify_writes = verify_writes
        self.events: list[Event] = []
        self.writers: dict[StorageKey, list[int]] = {}
        self.fingerprints: dict[StorageKey, tuple[int, ...]] = {}
        self.host_reads: set[int] = set()
        self.host_read_elements = 0  # elements read to the host by `.item()`, `.tolist()`, `.numpy()`
        self.largest_output = 0
        self.candidate_files: set[str] = set()  # the candidate's source file (record_candidate_state)
        self._quiet = 0
        self._launching = 0
        self._launch_reads: list[set[int]] = []  # per open launch: events its launcher's own ops read

    # --- registration -------------------------------------------------------------------------
    def register(self, tensors: Iterable[torch.Tensor], kind: str, name: str) -> None:
        """Mark existing tensors as sources of data (`input` or `state`), before the call."""
        for tensor in tensors:
            key = _storage_key(tensor)
            if key is not None and key not in self.writers:
                self.writers[key] = [self._add(kind, name)]
                self._remember(key, tensor)

    def _add(self, kind: str, name: str, work: Work = Work(), deps: Iterable[int] = (), elements: int = 0,
             signature: tuple = ()) -> int:
        index = len(self.events)
        self.events.append(Event(index, kind, name, work.bytes, work.flops, tuple(sorted(set(deps))), elements,
                                 signature))
        return index

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Ops run inside are not recorded (the recorder's own and the launcher's)."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    def _from_candidate_inside_launch(self) -> bool:
        """Whether the op now dispatched was called by the candidate's own code from inside a launch
        (an autotuner's `pre_hook`, a heuristic's value function, a grid function, or Python run
        from a kernel body by the interpreter) rather than by Triton's launcher itself: the frames
        between here and the launch wrapper include one of the candidate's file."""
        if not self.candidate_files:
            return False
        from atrl.harness.stages import launch_hook

        wrapper = launch_hook.__file__
        frame = sys._getframe(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename in self.candidate_files:
                return True
            if filename == wrapper:
                return False
            frame = frame.f_back
        return False

    def _launchers_own(self, func, name: str, args: tuple, kwargs: dict) -> bool:
        """Whether an op inside a launch, with no frame of the candidate's on the stack, is the
        launcher's own work (not recorded). Data movement is; a computing op is not: it came from a
        callback the candidate handed the launcher (a heuristic's or `pre_hook`'s
        `functools.partial(F.relu, buf)`) and is recorded as PyTorch's. Whatever the launcher's own
        ops read from storages already recorded counts as read by the launch, so a callback's copy
        of a tensor computed earlier stays on the data path."""
        returns = func._schema.returns
        is_view = bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in returns)
        if name not in LAUNCHER_OPS and not is_view:
            return False
        for tensor in _tensors(tree_flatten((args, kwargs))[0]):
            key = _storage_key(tensor)
            if key is not None and key in self.writers:
                self._launch_reads[-1].update(self.writers[key])
        return True

    def _unrecorded(self) -> bool:
        """Whether what runs now is the recorder's own work or the launcher's (not the candidate's)."""
        return bool(self._quiet) or (bool(self._launching) and not self._from_candidate_inside_launch())

    def note_host_read(self, tensor: torch.Tensor) -> None:
        """`.tolist()` / `.numpy()`: the tensor's values leave for the host without an aten op."""
        if self._unrecorded():
            return
        self.host_reads.update(self._sources(tensor))
        self.host_read_elements += tensor.numel()

    def _remember(self, key: StorageKey, tensor: torch.Tensor) -> None:
        if self.verify_writes:
            with self.quiet():
                self.fingerprints[key] = fingerprint(tensor)

    def _sources(self, tensor: torch.Tensor, first_seen: str = "data made outside PyTorch's ops") -> list[int]:
        """The events that wrote `tensor`'s storage, checking it was not changed behind our back."""
        key = _storage_key(tensor)
        if key is None:
            return []
        if key not in self.writers:
            self.writers[key] = [self._add("untracked", f"{tuple(tensor.shape)} {first_seen}")]
            self._remember(key, tensor)
        elif self.verify_writes:
            with self.quiet():
                now = fingerprint(tensor)
            if now != self.fingerprints.get(key):
                self.writers[key].append(self._add(
                    "untracked", f"{tuple(tensor.shape)} buffer written outside PyTorch's ops and Triton (e.g. a numpy view)"))
                self.fingerprints[key] = now
        return list(self.writers[key])

    def _write(self, tensor: torch.Tensor, event: int, whole: bool) -> None:
        key = _storage_key(tensor)
        if key is None:
            return
        if whole or key not in self.writers:
            self.writers[key] = [event]
        else:
            self.writers[key].append(event)
        self._remember(key, tensor)

    # --- aten ops -------------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self._quiet:
            return func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if self._launching and not self._from_candidate_inside_launch() \
                and self._launchers_own(func, name, args, kwargs):
            return func(*args, **kwargs)
        if name in RESIZE_OPS:
            return self._resize(func, args, kwargs)
        if name == "lift_fresh":
            out = func(*args, **kwargs)
            self._note_python_constant(out)
            return out
        if name in METADATA_INPLACE_OPS:
            return func(*args, **kwargs)
        operands, written = _split_arguments(func, args, kwargs)
        returns = func._schema.returns
        if not written and returns and all(r.alias_info is not None for r in returns):
            return func(*args, **kwargs)  # a view: same data, nothing made
        inputs = _tensors(tree_flatten((args, kwargs))[0])
        kind = "constant" if name in CONSTANT_OPS else "copy" if name in COPY_OPS else "torch"
        reads_written = kind == "torch" and name.endswith("_")
        if kind != "constant":
            read = operands + written if reads_written else operands
        elif name.endswith("_like") or name.startswith("new_") or name in ("fill", "zero"):  # a template first
            read = _tensors(tree_flatten((args[1:], kwargs))[0])
        else:  # `fill_(t)`, `torch.linspace(t, t, 1)`: the tensors among its values are data in
            read = operands
        deps = [e for t in read for e in self._sources(t)]
        out = func(*args, **kwargs)
        outputs = _tensors(tree_flatten(out)[0])
        input_keys = {_storage_key(t) for t in inputs}
        fresh = [t for t in outputs if _storage_key(t) not in input_keys]
        if name in UNINITIALISED_OPS:
            with self.quiet():
                for tensor in fresh:
                    poison(tensor)
        if name in HOST_READ_OPS or (not fresh and not written and not outputs):
            self.host_reads.update(deps)
            if name == "_local_scalar_dense":  # `.item()`, `float(t)`: one value to the host
                self.host_read_elements += 1
            return out
        if not fresh and not written:
            return out  # a view or alias: same data, nothing made
        made = sum(t.numel() for t in {id(t): t for t in fresh + written}.values())
        if kind == "torch" and deps and made <= MAX_CONSTANT_ELEMENTS \
                and all(self.events[e].kind == "python-constant" for e in deps):
            # arithmetic on small Python values only (`torch.tensor(x.shape[:d]).prod()`): a Python
            # constant as well, held to the same limits as the values it came from
            event = self._add("python-constant", f"aten.{name} on Python values", Work(), deps, elements=made)
            for tensor in fresh + written:
                self._write(tensor, event, whole=True)
            return out
        work = Work()
        if kind in ("torch", "copy"):
            moved = _traffic(read, fresh + written)
            work = Work(moved, _flops(func, args, kwargs, out, outputs)) if kind == "torch" else Work(moved)
        signature = library_signature(f"aten.{name}", args, kwargs) if kind == "torch" else ()
        event = self._add(kind, f"aten.{name}", work, deps, signature=signature)
        for tensor in fresh:
            self._write(tensor, event, whole=True)
        for tensor in written:
            # the old writers stay behind a partial write that does not read the old values
            covers = _nbytes(tensor) >= tensor.untyped_storage().nbytes() and tensor.is_contiguous()
            self._write(tensor, event, whole=covers or reads_written)
        return out

    def _resize(self, func, args: tuple, kwargs: dict) -> object:
        tensor = args[0]
        before = _storage_key(tensor)
        out = func(*args, **kwargs)
        after = _storage_key(tensor)
        if after is not None and after != before:  # reallocated: the old values were copied over
            kept = self.writers.get(before, []) if before is not None else []
            self.writers[after] = list(kept) or [self._add("constant", f"aten.{func.overloadpacket.__name__}")]
            self._remember(after, tensor)
        return out

    def _note_python_constant(self, tensor: torch.Tensor) -> None:
        """A tensor built from Python values (`torch.tensor(...)`): a constant while small."""
        key = _storage_key(tensor)
        if key is None or key in self.writers:
            return
        if tensor.numel() <= MAX_CONSTANT_ELEMENTS:
            self.writers[key] = [self._add("python-constant", f"{tuple(tensor.shape)} tensor built from Python values",
                                           elements=tensor.numel())]
        else:
            self.writers[key] = [self._add("untracked", f"{tuple(tensor.shape)} tensor built from Python/numpy values")]
        self._remember(key, tensor)

    # --- Triton launches --------------------------------------------------------------------------
    @contextmanager
    def launch(self, kernel: str, args: tuple, kwargs: dict) -> Iterator[None]:
        """Launch observer: the launch reads and writes every tensor argument. Its bytes moved
        follow `_traffic` (its loads and stores are not seen): it reads the arguments that hold data
        (an output only allocated or filled with a constant is not read) and writes those whose
        storage changed (every one where fingerprints are not taken), so a kernel writing into its
        operand moves what one writing into a new buffer does."""
        tensors = list({id(t): t for t in _tensors(list(args) + list(kwargs.values()))}.values())
        sources = [self._sources(t) for t in tensors]
        deps = [e for found in sources for e in found]
        read = [t for t, found in zip(tensors, sources, strict=True)
                if any(self.events[e].kind != "constant" for e in found)]
        before = {key: self.fingerprints.get(key) for t in tensors if (key := _storage_key(t)) is not None}
        first = len(self.events)
        self._launching += 1  # the launcher's own ops are not recorded; the candidate's are
        self._launch_reads.append(set())
        try:
            yield
        finally:
            self._launching -= 1
            reads = self._launch_reads.pop()
        # what ran inside the launch (callbacks, nested launches) and what its launcher read may feed the kernel
        deps += sorted(reads | set(range(first, len(self.events))))
        event = self._add("triton", kernel, Work(), deps)
        for tensor in tensors:
            self._write(tensor, event, whole=False)
        changed = [t for t in tensors if before.get(key := _storage_key(t)) is None
                   or self.fingerprints.get(key) != before[key]]
        self.events[event] = replace(self.events[event], bytes=_traffic(read, changed))

    # --- the result ---------------------------------------------------------------------------------
    def finish(self, outputs: list[torch.Tensor]) -> None:
        """Check the outputs' storages once more after the call (a last unrecorded write)."""
        for tensor in outputs:
            self._sources(tensor)
        self.largest_output = max((t.numel() for t in outputs), default=0)

    def was_written(self, tensor: torch.Tensor) -> bool:
        """Whether a recorded event of the call wrote `tensor`'s storage."""
        key = _storage_key(tensor)
        return key is not None and any(self.events[e].kind not in ("input", "state") for e in self.writers.get(key, []))

    def data_path(self, roots: Iterable[torch.Tensor]) -> list[Event]:
        """The events behind `roots`' storages (and behind every host read), in order."""
        pending = [e for t in roots if (key := _storage_key(t)) is not None for e in self.writers.get(key, [])]
        pending += list(self.host_reads)
        seen: set[int] = set()
        while pending:
            index = pending.pop()
            if index not in seen:
                seen.add(index)
                pending.extend(self.events[index].deps)
        return [self.events[i] for i in sorted(seen)]

    def compute_work(self) -> Work:
        """Bytes and FLOPs of every PyTorch compute event, and the bytes its copies moved (used on
        the reference's call)."""
        compute = [e for e in self.events if e.kind == "torch"]
        return Work(sum(e.bytes for e in compute), sum(e.flops for e in compute),
                    sum(e.bytes for e in compute if e.name in LIBRARY_OPS),
                    sum(e.bytes for e in self.events if e.kind == "copy"),
                    tuple(sorted(e.signature for e in compute if e.name in LIBRARY_OPS)))


@contextmanager
def recording(verify_writes: bool = True) -> Iterator[ProvenanceRecorder]:
    """A recorder active over the block: aten ops through the dispatch mode, Triton launches
    through the launch hook."""
    from atrl.harness.stages.launch_hook import observe_launches

    recorder = ProvenanceRecorder(verify_writes)
    with observe_launches(recorder.launch), _host_reads_noted(recorder), recorder:
        yield recorder


_recording: list[ProvenanceRecorder] = []  # the recorders active now, innermost last


@contextmanager
def _harness_work() -> Iterator[None]:
    """The harness's own tensor work (a fingerprint, also one taken inside a launch): unrecorded."""
    active = list(_recording)
    for recorder in active:
        recorder._quiet += 1
    try:
        yield
    finally:
        for recorder in active:
            recorder._quiet -= 1


_reading = 0


def install_host_read_hooks() -> None:
    """`Tensor.tolist` and `Tensor.numpy` dispatch no aten op on the CPU: wrap them (once, like the
    launch hook) so that the innermost active recorder is told of them."""
    for name in ("tolist", "numpy"):
        original = getattr(torch.Tensor, name)
        if getattr(original, "_atrl_host_read", False):
            continue

        def wrap(original):
            @functools.wraps(original)
            def read(self, *args, **kwargs):
                global _reading
                if _recording and not _reading and isinstance(self, torch.Tensor):
                    _recording[-1].note_host_read(self)
                _reading += 1  # a subclass's __torch_function__ calls the read again: one read
                try:
                    return original(self, *args, **kwargs)
                finally:
                    _reading -= 1

            read._atrl_host_read = True  # type: ignore[attr-defined]
            return read

        setattr(torch.Tensor, name, wrap(original))


@contextmanager
def _host_reads_noted(recorder: ProvenanceRecorder) -> Iterator[None]:
    install_host_read_hooks()
    _recording.append(recorder)
    try:
        yield
    finally:
        _recording.remove(recorder)


def record_candidate_state(recorder: ProvenanceRecorder, model: torch.nn.Module, inputs: list) -> None:
    """Register the inputs and what the candidate holds (its module, its file's globals) as sources."""
    recorder.register(_tensors(inputs), "input", "forward input")
    recorder.register(module_tensors(model), "state", "module state")
    module = sys.modules.get(type(model).__module__)
    if module is not None:
        recorder.register(module_tensors(list(vars(module).values()), depth=2), "state", "module global")
        if isinstance(getattr(module, "__file__", None), str):
            recorder.candidate_files.add(module.__file__)


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.2f} MiB" if n >= 1 << 20 else f"{n / 1024:.1f} KiB"


def _top_ops(events: list[Event], total: int) -> str:
    by_name: dict[str, int] = {}
    for event in events:
        by_name[event.name] = by_name.get(event.name, 0) + event.bytes
    ranked = sorted(by_name.items(), key=lambda item: -item[1])[:4]
    return ", ".join(f"{name} ({_mib(b)}" + (f", {b / total:.0%} of the reference's" if total else "") + ")"
                     for name, b in ranked)


def _library_may_stay(reference: Work) -> bool:
    """Whether the reference runs library kernels and other work too (only then may its library
    kernels stay in PyTorch under `partial`)."""
    return 0 < reference.library_bytes < reference.bytes


def pytorch_work(path: list[Event], reference: Work) -> list[Event]:
    """The events on a data path that count as PyTorch doing the task's work: compute ops, and
    copies too where the reference's own work is data movement only (module docstring)."""
    kinds = ("torch", "copy") if reference.movement_only else ("torch",)
    return [e for e in path if e.kind in kinds]


def library_signature(name: str, args: tuple, kwargs: dict | None = None) -> tuple:
    """The problem a library op solves, whatever op, operand order or bias computes it: a GEMM's
    {M, N} and K (`x @ w` and `(w.T @ x.T).T` are one GEMM), a batched GEMM's batch too, a
    convolution's input and weight shapes (its bias may move into the epilogue), an attention's
    query, key and value shapes. Empty for any other op. An `addmm`/`baddbmm` that scales (`beta`,
    `alpha` other than 1) computes an epilogue as well: its scales are part of the problem."""
    if name not in LIBRARY_OPS:
        return ()
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if name in ("aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm"):
        a, b = tensors[-2], tensors[-1]  # addmm/baddbmm: (bias, a, b)
        *batch, m, k = a.shape
        n = b.shape[-1]
        scales = tuple(float((kwargs or {}).get(key, 1)) for key in ("beta", "alpha"))
        return ("gemm", *batch, min(m, n), max(m, n), k, *(scales if scales != (1.0, 1.0) else ()))
    if "convolution" in name:
        return ("convolution", *(tuple(t.shape) for t in tensors[:2]))  # (input, weight, bias)
    return ("attention", *(tuple(t.shape) for t in tensors[:3]))


def _reference_library(path: list[Event], reference: Work) -> list[Event]:
    """The library ops on a data path that solve one of the reference's own library problems
    (each of the reference's at most once): only those may stay in PyTorch under `partial`. A GEMM
    of other shapes (the task folded into matrix-vector products) is PyTorch doing other work."""
    left: dict[tuple, int] = {}
    for signature in reference.library_signatures:
        left[signature] = left.get(signature, 0) + 1
    kept: list[Event] = []
    for event in path:
        if event.kind == "torch" and event.name in LIBRARY_OPS and left.get(event.signature, 0) > 0:
            left[event.signature] -= 1
            kept.append(event)
    return kept


def triton_share(path: list[Event], reference: Work) -> float:
    """1 − (bytes moved by PyTorch work on the data path) / (bytes moved by the reference), ≥ 0.
    Where the reference runs library kernels and other work too, library kernels on the data path
    up to the reference's own library bytes are left out of both (module docstring)."""
    compute = pytorch_work(path, reference)
    torch_bytes = sum(e.bytes for e in compute)
    if reference.movement_only:
        return max(0.0, 1.0 - torch_bytes / reference.copy_bytes)
    if _library_may_stay(reference):
        kept = min(sum(e.bytes for e in _reference_library(compute, reference)), reference.library_bytes)
        return max(0.0, 1.0 - (torch_bytes - kept) / (reference.bytes - reference.library_bytes))
    if reference.bytes <= 0:
        return 0.0 if torch_bytes else 1.0
    return max(0.0, 1.0 - torch_bytes / reference.bytes)


def decide(recorder: ProvenanceRecorder, roots: list[torch.Tensor], rule: ProvenanceRule,
           reference: Work) -> tuple[Mismatch | None, float]:
    """The provenance verdict of one call: a failure (or None) and the Triton share of the work.
    Zero-element outputs have no data to come from anywhere and are left out."""
    positions = [i for i, root in enumerate(roots) if root.numel() > 0]
    roots = [roots[i] for i in positions]
    path = recorder.data_path(roots)
    share = triton_share(path, reference)
    untracked = [e for e in path if e.kind == "untracked"]
    for root in roots:  # Python values that carry the result itself, in one constant or in many
        constants = [e for e in recorder.data_path([root]) if e.kind == "python-constant"]
        if constants and sum(e.elements for e in constants) >= root.numel():
            untracked.append(constants[0])
    if recorder.host_read_elements >= max(MAX_CONSTANT_ELEMENTS, recorder.largest_output):
        untracked.append(Event(-1, "untracked", f"{recorder.host_read_elements} elements read to the host "
                                                "(.tolist(), .numpy(), .item()) in forward, as many as the output has"))
    if untracked:
        return Mismatch(
            "correctness:untracked-data",
            f"the result depends on data that no PyTorch op or Triton launch in forward produced: {untracked[0].name}. "
            "Compute it in a Triton kernel; do not build results with numpy, Python lists, .tolist() or "
            "torch.from_numpy"), share
    for position, root in zip(positions, roots, strict=True):
        if not any(e.kind == "triton" for e in recorder.data_path([root])):
            sources = sorted({e.name for e in recorder.data_path([root])}) or ["nothing recorded"]
            return Mismatch(
                "correctness:no-triton-output",
                f"output {position} was not produced by any Triton launch in this call (it came from: "
                f"{', '.join(sources)[:200]}); every output must be computed by your kernels on every call, "
                "not returned from a cache, a copy of the inputs or module state"), share
    compute = pytorch_work(path, reference)
    total = reference.copy_bytes if reference.movement_only else reference.bytes
    if rule.policy == "strict" and compute:
        advice = ("This task is data movement, so a PyTorch copy (.contiguous(), .clone(), .copy_()) of the data "
                  "is its computation: read the input and write the output in your Triton kernel"
                  if reference.movement_only else
                  "Move that computation into your Triton kernel; use torch in forward only to allocate, view "
                  "and copy tensors")
        return Mismatch(
            "correctness:pytorch-compute",
            f"PyTorch computed part of the result under the strict policy: {_top_ops(compute, total)}. {advice}"), share
    if rule.policy == "partial" and share < rule.threshold:
        return Mismatch(
            "correctness:low-triton-share",
            f"Triton's share of the work is {share:.0%} (threshold {rule.threshold:.0%}): PyTorch ops on the data "
            f"path move {1 - share:.0%} of the bytes the reference's own ops move"
            f"{' besides its GEMMs/convolutions (those may stay in PyTorch)' if _library_may_stay(reference) else ''}"
            f" — {_top_ops(compute, total)}. "
            "Move the largest of them into Triton kernels"), share
    return None, share

