"""Static rules for candidates whose target platform is Ascend (the `ascend` backend, and the
NPUKernelBench suite on any backend): what triton-ascend or the NPU rejects although stock Triton
on a GPU accepts it. Learned from triton-ascend's documentation and from what its compiler
(3.2.0, lowering for Ascend910B3) refused when tried:

- `static:ascend-cuda-only`: `tl.inline_asm_elementwise` (GPU assembly; triton-ascend lowers the
  call to linalg, so only the NPU binary step would fail), `triton.language.extra.cuda` / `.hip`
  (absent from triton-ascend), and `"cuda"` devices, `.cuda()` or `torch.cuda` in host code;
- `static:ascend-dtype`: fp64 and fp8 inside kernels (the frontend refuses fp64 in math functions
  and `tl.dot`, and fp8 casts; the vector units have no fp64);
- `static:ascend-dot`: `tl.dot` with `input_precision` "tf32"/"tf32x3" or `allow_tf32=True` (refused:
  Ascend's reduced fp32 mode is "hf32"), or `max_num_imprecise_acc` (ignored on Ascend);
- `static:ascend-grid`: a launch grid of literal sizes above 65535 programs (the NPU's coreDim limit);
- `static:ascend-buffer`: one block of literal shape larger than a vector core's 192 KB unified
  buffer (`tl.arange(0, N)`, `tl.zeros`/`tl.full` shapes, or a literal constexpr passed at launch
  for a parameter a kernel feeds to `tl.arange`): the NPU compiler stops with "ub overflow".
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from atrl.harness.static.common import Aliases, Violation, live_nodes, matches, violation

MAX_PROGRAMS = 65535
UB_BYTES = 192 * 1024
RULES = ("static:ascend-cuda-only", "static:ascend-dtype", "static:ascend-dot", "static:ascend-grid",
         "static:ascend-buffer")
_CUDA_ONLY_MODULES = ("triton.language.extra.cuda", "triton.language.extra.hip")
_FP64 = frozenset({"float64", "fp64"})
_FP8_PREFIX = ("float8", "fp8")
_DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
                "uint8": 1, "float64": 8, "int1": 1}
_TF32 = frozenset({"tf32", "tf32x3"})


def check_ascend(tree: ast.Module, aliases: Aliases) -> list[Violation]:
    """Every Ascend violation of the module, in source order."""
    kernels = [n for n in live_nodes(tree) if isinstance(n, ast.FunctionDef) and _is_jit(n, aliases)]
    in_kernel = {id(node) for kernel in kernels for node in ast.walk(kernel)}
    found = list(_cuda_only(tree, aliases, in_kernel))
    for kernel in kernels:
        found.extend(_kernel_dtypes(kernel, aliases))
        found.extend(_dots(kernel, aliases))
        found.extend(_blocks(kernel, aliases))
    found.extend(_launches(tree, kernels))
    return sorted(found, key=lambda v: v.line)


def _is_jit(node: ast.FunctionDef, aliases: Aliases) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = aliases.qualname(target) or ""
        if name in ("triton.jit", "triton.runtime.jit.jit"):
            return True
    return False


def _name(node: ast.AST, aliases: Aliases) -> str:
    return aliases.qualname(node) or ""


def _cuda_only(tree: ast.Module, aliases: Aliases, in_kernel: set[int]) -> Iterator[Violation]:
    rule = "static:ascend-cuda-only"
    for node in live_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            names = [module] if module else [a.name for a in node.names]
            names += [f"{module}.{a.name}" for a in node.names] if module else []
            hit = next((n for n in names if any(matches(n, m) for m in _CUDA_ONLY_MODULES)), None)
            if hit:
                yield violation(rule, node, f"`{hit}` is GPU-only and absent from triton-ascend",
                                "use `tl.*` math (or `triton.language.extra.ascend.libdevice` on Ascend)")
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            name = _name(node, aliases)
            if matches(name, "triton.language.inline_asm_elementwise"):
                yield violation(rule, node, "tl.inline_asm_elementwise runs GPU assembly, which an NPU cannot",
                                "write the operation with tl.* arithmetic")
            elif name in _CUDA_ONLY_MODULES:
                yield violation(rule, node, f"`{name}` is GPU-only and absent from triton-ascend",
                                "use `tl.*` math (or `triton.language.extra.ascend.libdevice` on Ascend)")
            elif id(node) not in in_kernel and (matches(name, "torch.cuda") and name.count(".") == 2
                                                or node.attr == "cuda" and not name.startswith("torch.")):
                what = f"`{name}`" if name else "`.cuda()`"
                yield violation(rule, node, f"{what} targets a CUDA GPU, not the NPU",
                                "allocate on the inputs' device (`device=x.device`, `torch.empty_like(x)`)")
        elif isinstance(node, ast.keyword) and node.arg == "device" and _is_cuda_literal(node.value):
            yield violation(rule, node.value, "device=\"cuda\" targets a CUDA GPU, not the NPU",
                            "allocate on the inputs' device (`device=x.device`)")


def _is_cuda_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"


def _kernel_dtypes(kernel: ast.FunctionDef, aliases: Aliases) -> Iterator[Violation]:
    for node in ast.walk(kernel):
        if isinstance(node, ast.Attribute):
            name = _name(node, aliases)
            if not matches(name.rsplit(".", 1)[0], "triton.language"):
                continue
            if node.attr in _FP64:
                yield violation("static:ascend-dtype", node, f"`tl.{node.attr}` in kernel {kernel.name}: "
                                "triton-ascend's math functions and tl.dot take no fp64",
                                "compute in tl.float32 and cast at the store")
            elif node.attr.startswith(_FP8_PREFIX):
                yield violation("static:ascend-dtype", node, f"`tl.{node.attr}` in kernel {kernel.name}: "
                                "triton-ascend refuses fp8 casts", "use tl.float16 or tl.bfloat16")


def _dots(kernel: ast.FunctionDef, aliases: Aliases) -> Iterator[Violation]:
    for node in ast.walk(kernel):
        if not (isinstance(node, ast.Call) and _name(node.func, aliases) == "triton.language.dot"):
            continue
        for keyword in node.keywords:
            value = keyword.value.value if isinstance(keyword.value, ast.Constant) else None
            if keyword.arg == "input_precision" and value in _TF32 or keyword.arg == "allow_tf32" and value is True:
                yield violation("static:ascend-dot", node, f"tl.dot({keyword.arg}={value!r}) is refused on Ascend",
                                "drop it (fp32 is exact) or use input_precision=\"hf32\"")
            elif keyword.arg == "max_num_imprecise_acc":
                yield violation("static:ascend-dot", node, "tl.dot(max_num_imprecise_acc=...) is ignored on Ascend",
                                "drop the argument")


def _literal_int(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.LShift, ast.Add)):
        left, right = _literal_int(node.left), _literal_int(node.right)
        if left is None or right is None:
            return None
        return left * right if isinstance(node.op, ast.Mult) else left << right if isinstance(
            node.op, ast.LShift) else left + right
    return None


def _dtype_bytes(call: ast.Call, aliases: Aliases, default: int) -> int:
    for keyword in call.keywords:
        if keyword.arg == "dtype":
            return _DTYPE_BYTES.get(_name(keyword.value, aliases).rsplit(".", 1)[-1], default)
    return default


def _buffer_violation(node: ast.AST, kernel: str, elements: int, size: int, where: str) -> Violation:
    return violation("static:ascend-buffer", node, f"{where} in kernel {kernel} is one block of {elements} "
                     f"elements ({elements * size // 1024} KB), more than the 192 KB unified buffer of an "
                     "Ascend vector core", "tile it: a smaller BLOCK and a loop inside the kernel over sub-blocks")


def _blocks(kernel: ast.FunctionDef, aliases: Aliases) -> Iterator[Violation]:
    for node in ast.walk(kernel):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func, aliases)
        if name == "triton.language.arange" and len(node.args) == 2:
            start, end = _literal_int(node.args[0]), _literal_int(node.args[1])
            if start is not None and end is not None and (end - start) * 4 > UB_BYTES:
                yield _buffer_violation(node, kernel.name, end - start, 4, "tl.arange")
        elif name in ("triton.language.zeros", "triton.language.full") and node.args:
            shape = node.args[0]
            dims = [_literal_int(d) for d in shape.elts] if isinstance(shape, (ast.Tuple, ast.List)) else [
                _literal_int(shape)]
            if dims and all(d is not None for d in dims):
                elements = 1
                for d in dims:
                    elements *= d  # type: ignore[operator]
                size = _dtype_bytes(node, aliases, 4)
                if elements * size > UB_BYTES:
                    yield _buffer_violation(node, kernel.name, elements, size, name.rsplit(".", 1)[-1])


def _arange_params(kernel: ast.FunctionDef) -> set[str]:
    """Parameters a kernel passes as the end of `tl.arange(0, PARAM)`."""
    params = {a.arg for a in kernel.args.args}
    found = set()
    for node in ast.walk(kernel):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "arange":
            if len(node.args) == 2 and isinstance(node.args[1], ast.Name) and node.args[1].id in params:
                found.add(node.args[1].id)
    return found


def _launches(tree: ast.Module, kernels: list[ast.FunctionDef]) -> Iterator[Violation]:
    by_name = {k.name: k for k in kernels}
    for node in live_nodes(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in by_name):
            continue
        kernel = by_name[node.func.value.id]
        grid = node.func.slice
        sizes = [_literal_int(g) for g in grid.elts] if isinstance(grid, ast.Tuple) else [_literal_int(grid)]
        if sizes and all(s is not None for s in sizes):
            total = 1
            for s in sizes:
                total *= s  # type: ignore[operator]
            if total > MAX_PROGRAMS:
                yield violation("static:ascend-grid", node, f"kernel {kernel.name} is launched with {total} "
                                f"programs; an Ascend NPU runs at most {MAX_PROGRAMS} per launch",
                                "launch about as many programs as AI cores and loop over blocks in the kernel")
        arange_params = _arange_params(kernel)
        for keyword in node.keywords:
            value = _literal_int(keyword.value)
            if keyword.arg in arange_params and value is not None and value * 4 > UB_BYTES:
                yield _buffer_violation(keyword.value, kernel.name, value, 4, f"{keyword.arg}={value}")
