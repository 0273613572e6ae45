"""The cost of comparing one large output with the reference, as the correctness stage does it.

`compare_outputs` (allclose in chunks, then the relative error against a float64 reference) and
the wide trials' `output_scale`, on one fp32 output of `--elements` elements: a right output
(the reference plus 1e-7 relative noise) and a wrong one (every element + 1). Reports the median
wall seconds over `--repeats` calls and, from one call under a dispatch mode, the number of
tensor operations (on a GPU each is a kernel launch) and of device-to-host reads (each a
synchronisation on a GPU). At KernelBench's default sizes a trial runs this on 1.6-1.9 G
elements several times (outputs, inputs updated in place), which is why it is measured here.
On CUDA, where large outputs are compared by fused Triton kernels (`compare_kernels`), each
step is timed both ways side by side, the PyTorch path and the fused one, with their ratio.

    python benchmarks/compare_speed.py --elements 67108864 --device cpu
    python benchmarks/compare_speed.py --elements 1610612736 --device cuda   # 19_ReLU's output
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import atrl.harness.stages.compare as compare
from atrl.harness.stages.compare import compare_outputs
from atrl.harness.stages.correctness import output_scale

HOST_READS = {"_local_scalar_dense", "item", "nonzero", "is_nonzero", "equal"}


class OpCounter(TorchDispatchMode):
    """Counts tensor operations and the reads of values back to the host (`item`, `float`, `int`,
    `bool` dispatch `_local_scalar_dense`; `tolist` does not dispatch, so it is counted apart)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops = 0
        self.host_reads = 0
        self._tolist = torch.Tensor.tolist

    def __enter__(self):
        counter, tolist = self, self._tolist

        def counted_tolist(tensor):
            counter.host_reads += 1
            return tolist(tensor)

        torch.Tensor.tolist = counted_tolist
        return super().__enter__()

    def __exit__(self, *exc):
        torch.Tensor.tolist = self._tolist
        return super().__exit__(*exc)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops += 1
        if func.overloadpacket.__name__ in HOST_READS:
            self.host_reads += 1
        return func(*args, **(kwargs or {}))


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def measure(fn, device: str, repeats: int) -> tuple[float, int, int]:
    """(median seconds, operations, host reads) of `fn()`."""
    fn()  # warm-up
    seconds = []
    for _ in range(repeats):
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        seconds.append(time.perf_counter() - start)
    with OpCounter() as counter:
        fn()
    return statistics.median(seconds), counter.ops, counter.host_reads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=1 << 26)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    ref = torch.randn(args.elements, device=args.device)
    ref64 = ref.double()
    right = ref * (1 + 1e-7 * torch.randn_like(ref))
    wrong = ref + 1
    atol = rtol = 1e-4
    cases = {
        "compare_outputs, right output": lambda: compare_outputs(ref, right, ref64, atol, rtol, 1e-5),
        "compare_outputs, wrong output": lambda: compare_outputs(ref, wrong, ref64, atol, rtol, 1e-5),
        "output_scale": lambda: output_scale(right),
    }
    print(f"{args.elements:,} fp32 elements on {args.device}, {args.repeats} repeats\n")
    fused_possible = compare.uses_fused_kernels(ref, right)
    paths = ("pytorch", "fused") if fused_possible else ("pytorch",)
    print("| step | path | median s | tensor ops | host reads |")
    print("|---|---|---:|---:|---:|")
    real = compare.uses_fused_kernels
    for name, fn in cases.items():
        medians = {}
        for path in paths:
            compare.uses_fused_kernels = real if path == "fused" else (lambda *tensors: False)
            try:
                seconds, ops, reads = measure(fn, args.device, args.repeats)
            finally:
                compare.uses_fused_kernels = real
            medians[path] = seconds
            print(f"| {name} | {path} | {seconds:.3f} | {ops} | {reads} |")
        if len(medians) == 2 and medians["fused"] > 0:
            print(f"| {name} | pytorch / fused | {medians['pytorch'] / medians['fused']:.1f}x | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
