"""What a candidate's source says about the likely cause of a wrong result.

Pure AST/text checks over the Triton kernels (`@triton.jit` functions) of a candidate module;
the tensor evidence in `atrl.harness.feedback.diagnosis` decides the class, these name the culprit:
the lower-precision step behind a precision loss, the stores that race, the masked loads
without a neutral `other=`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from atrl.astnames import dotted_name, parse_source

_FP16 = re.compile(r"\b(tl\.float16|torch\.float16|float16|tl\.half|\.half\(\)|fp16)\b")
_BF16 = re.compile(r"\b(tl\.bfloat16|torch\.bfloat16|bfloat16|bf16)\b")


@dataclass
class SourceFacts:
    """Facts about a candidate's kernels, each with the lines it is seen on (1-based)."""

    tf32_dots: list[int] = field(default_factory=list)  # tl.dot without input_precision="ieee"/allow_tf32=False
    fp16_lines: list[int] = field(default_factory=list)
    bf16_lines: list[int] = field(default_factory=list)
    racy_stores: list[int] = field(default_factory=list)  # same address from every program, no atomics
    masked_loads_without_other: list[int] = field(default_factory=list)
    exp_lines: list[int] = field(default_factory=list)
    division_lines: list[int] = field(default_factory=list)


def _dotted(node: ast.AST) -> str:
    return dotted_name(node) or ""


def _is_jit(function: ast.FunctionDef) -> bool:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if _dotted(target).split(".")[-1] in ("jit", "autotune", "heuristics"):
            return True
    return False


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _full_precision_dot(call: ast.Call) -> bool:
    precision = _keyword(call, "input_precision")
    if isinstance(precision, ast.Constant) and precision.value == "ieee":
        return True
    allow = _keyword(call, "allow_tf32")
    return isinstance(allow, ast.Constant) and allow.value is False


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _program_id_axis(call: ast.Call) -> int | None:
    """The axis of a `tl.program_id(axis)` call when it is a constant (None otherwise)."""
    axis = call.args[0] if call.args else _keyword(call, "axis")
    return axis.value if isinstance(axis, ast.Constant) and isinstance(axis.value, int) else None


def _reads_program_id(value: ast.AST, axis: int | None) -> bool:
    return any(isinstance(n, ast.Call) and _dotted(n.func).endswith("program_id")
               and (axis is None or _program_id_axis(n) == axis) for n in ast.walk(value))


def _program_dependent_names(function: ast.FunctionDef, axis: int | None = None) -> set[str]:
    """Names whose value depends on tl.program_id (of `axis`; None: of any axis), through
    assignments and loop variables (to a fixed point)."""
    dependent: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(function):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                value = node.value
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            elif isinstance(node, ast.For):
                value, targets = node.iter, [node.target]
            else:
                continue
            if not (_reads_program_id(value, axis) or _names(value) & dependent):
                continue
            for target in targets:
                new = _names(target) - dependent
                if new:
                    dependent |= new
                    changed = True
    return dependent


def _racy_stores(function: ast.FunctionDef) -> list[int]:
    """Stores, in a kernel with several programs (it reads tl.program_id) and no atomics, whose
    address does not depend on the program id, or not on one of the grid axes the kernel reads
    (e.g. programs along axis 1 that each add into the same row): those programs write the same place."""
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
    names = [_dotted(c.func) for c in calls]
    if not any(n.endswith("program_id") for n in names) or any(".atomic_" in n for n in names):
        return []
    axes = {_program_id_axis(c) for c, n in zip(calls, names, strict=True) if n.endswith("program_id")}
    per_axis = [_program_dependent_names(function, a) for a in sorted(a for a in axes if a is not None)]
    dependent = _program_dependent_names(function)
    racy = []
    for call, name in zip(calls, names, strict=True):
        if not (name.endswith(".store") and call.args):
            continue
        address = _names(call.args[0])
        if not address & dependent or (len(per_axis) > 1 and any(not address & d for d in per_axis)):
            racy.append(call.lineno)
    return racy


def source_facts(source: str) -> SourceFacts:
    """The facts of `source`'s kernels; empty facts when it does not parse."""
    facts = SourceFacts()
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return facts
    lines = source.splitlines()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef) or not _is_jit(function):
            continue
        facts.racy_stores += _racy_stores(function)
        for node in ast.walk(function):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                facts.division_lines.append(node.lineno)
            if not isinstance(node, ast.Call):
                continue
            name = _dotted(node.func)
            if name.endswith(".dot") and not _full_precision_dot(node):
                facts.tf32_dots.append(node.lineno)
            elif name.endswith(".load") and _keyword(node, "mask") is not None and _keyword(node, "other") is None \
                    and len(node.args) < 3:
                facts.masked_loads_without_other.append(node.lineno)
            elif name.split(".")[-1] in ("exp", "exp2"):
                facts.exp_lines.append(node.lineno)
        for number in range(function.lineno, (function.end_lineno or function.lineno) + 1):
            text = lines[number - 1].split("#")[0]
            if _FP16.search(text):
                facts.fp16_lines.append(number)
            if _BF16.search(text):
                facts.bf16_lines.append(number)
    # the casts may sit in forward (x.half() before the launch) as well as in a kernel
    for number, line in enumerate(lines, start=1):
        text = line.split("#")[0]
        if _FP16.search(text) and number not in facts.fp16_lines:
            facts.fp16_lines.append(number)
        if _BF16.search(text) and number not in facts.bf16_lines:
            facts.bf16_lines.append(number)
    for values in vars(facts).values():
        values.sort()
    return facts
