"""Stage 2 (static): judge a candidate's source by its syntax tree alone, before anything runs.

`check_static(code, compute_policy, allow_torch)` returns every `Violation` sorted by line (the harness
reports the first). Rules are the `static:*` keys of `FAILURE_CLASSES`:
  - structure: `ModelNew` defined, a `@triton.jit` kernel defined, a launch `kernel[grid](...)` reachable
    from `ModelNew.forward` (`graph`);
  - `static:pytorch-compute` under the `strict` policy only (`compute`, `compute_rules`,
    allowlist in `torch_allowlist.yaml`, extended per task by `allow_torch`);
  - the anti-cheat rules under every policy (`safety`; `kernel_calls`: host code called from a
    kernel body), and the use of reference names
    (`Model`, `get_inputs`, ...) from code that ModelNew reaches or that runs at import
    (`reference`: defining them is allowed, the harness ignores them).
  - for an Ascend target (`platform="ascend"`), what triton-ascend or the NPU rejects (`ascend`).
A syntax error is the only violation reported when the code does not parse.
`ignored_definitions(code)` lists the reference names the candidate defines (and its `__main__` block),
which the harness ignores, for the feedback.
"""

from __future__ import annotations

from collections.abc import Iterable

from atrl.astnames import parse_source
from atrl.harness.static.ascend import check_ascend
from atrl.harness.static.common import Aliases, Violation, live_module, violation
from atrl.harness.static.compute_rules import check_compute
from atrl.harness.static.graph import ModuleIndex, Reach, reach
from atrl.harness.static.kernel_calls import check_kernel_calls
from atrl.harness.static.reference import RULE as REFERENCE_RULE
from atrl.harness.static.reference import check_reference_use, reference_definition_lines
from atrl.harness.static.reference import ignored_definitions as _ignored_definitions
from atrl.harness.static.safety import check_safety

COMPUTE_POLICIES = ("strict", "partial")
# On one line, the more specific rule first: `globals()["Model"]` is a reference access before it is
# dynamic code, and any anti-cheat rule comes before pytorch-compute.
_LINE_ORDER = {REFERENCE_RULE: -1, "static:pytorch-compute": 1}
# Found inside the candidate's own copy of Model only because ModelNew uses it: the reference
# access, reported on its own line, is the cause to tell the agent.
_CONSEQUENCES_OF_REFERENCE_USE = frozenset({"static:pytorch-compute", "static:no-launch"})

__all__ = ["COMPUTE_POLICIES", "Violation", "check_static", "ignored_definitions"]


def check_static(code: str, compute_policy: str = "strict", allow_torch: Iterable[str] = (),
                 platform: str | None = None) -> list[Violation]:
    """All static violations of `code`, sorted by line; empty when the candidate may run.

    `compute_policy` is "strict" (PyTorch compute in forward rejected) or "partial" (allowed, but a
    reachable Triton launch is still required); `allow_torch` adds task-specific torch calls to the
    strict allowlist (formats in torch_allowlist.yaml); `platform` is the target platform: "ascend"
    adds the Ascend rules (whatever backend runs the candidate).
    """
    if compute_policy not in COMPUTE_POLICIES:
        raise ValueError(f"unknown compute policy {compute_policy!r}; expected one of {COMPUTE_POLICIES}")
    try:
        tree = parse_source(code)
    except SyntaxError as error:
        line = error.lineno or 1
        return [violation("static:syntax", line, f"{error.msg}", "fix the Python syntax")]
    except ValueError as error:  # e.g. null bytes in the source
        return [violation("static:syntax", 1, str(error), "send plain Python source")]
    aliases = Aliases(tree)
    found = check_safety(tree, aliases)
    index = ModuleIndex(live_module(tree), aliases)
    found.extend(check_reference_use(index))
    found.extend(check_kernel_calls(index))
    if platform == "ascend":
        found.extend(check_ascend(live_module(tree), aliases))
    reached = reach(index)
    found.extend(_check_structure(index, reached))
    if compute_policy == "strict" and "ModelNew" in index.classes:
        found.extend(check_compute(index, reached, allow_torch))
    if any(v.rule == REFERENCE_RULE for v in found):
        inside = reference_definition_lines(tree)
        found = [v for v in found if not (v.rule in _CONSEQUENCES_OF_REFERENCE_USE and v.line in inside)]
    unique = {(v.rule, v.line, v.message): v for v in found}
    return sorted(unique.values(), key=lambda v: (v.line, _LINE_ORDER.get(v.rule, 0)))


def ignored_definitions(code: str) -> list[str]:
    """The reference names `code` defines at module level (`Model`, `get_inputs`, ...), in source
    order, and `"__main__ block"` when it has one: the harness ignores them. Empty when the code
    does not parse."""
    try:
        tree = parse_source(code)
    except (SyntaxError, ValueError):
        return []
    return _ignored_definitions(tree)


def _check_structure(index: ModuleIndex, reached: Reach) -> list[Violation]:
    found: list[Violation] = []
    if not index.kernel_nodes:
        found.append(violation("static:no-triton-kernel", 1, "no function decorated with @triton.jit",
                               "write the computation as a @triton.jit kernel"))
    model = index.classes.get("ModelNew")
    if model is None:
        found.append(violation("static:no-modelnew", 1, "no class ModelNew",
                               "define `class ModelNew(nn.Module)` with the reference's __init__ and forward"))
        return found
    if index.method("ModelNew", "forward") is None:
        found.append(violation("static:no-launch", model.lineno, "ModelNew has no forward method",
                               "define forward and launch your kernel from it"))
    elif index.kernel_nodes and not reached.launches:
        forward = index.method("ModelNew", "forward")
        found.append(violation("static:no-launch", forward.lineno,  # type: ignore[union-attr]
                               "no kernel launch `kernel[grid](...)` is reachable from ModelNew.forward",
                               "launch your @triton.jit kernel from forward (or a helper it calls)"))
    return found
