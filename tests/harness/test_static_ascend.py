"""Static rules of an Ascend target: each rejects its construct only when the platform is Ascend,
and the builtin reference solutions pass them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from atrl.harness.static.checks import check_static

HEADER = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"


def _candidate(kernel_body: str, launch: str = "k[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)",
               host: str = "y = torch.empty_like(x)", extra_import: str = "") -> str:
    return (f"{HEADER}{extra_import}\n\n@triton.jit\ndef k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n"
            "    x = tl.load(x_ptr + offs, mask=mask)\n"
            f"    {kernel_body}\n    tl.store(y_ptr + offs, y, mask=mask)\n\n\n"
            "class ModelNew(nn.Module):\n    def forward(self, x):\n        n = x.numel()\n"
            f"        {host}\n        {launch}\n        return y\n")


def _ascend_rules(code: str, platform: str | None = "ascend") -> list[str]:
    return [v.rule for v in check_static(code, compute_policy="partial", platform=platform) if "ascend" in v.rule]


CASES = {
    "static:ascend-cuda-only": [
        _candidate('y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, '
                   'is_pure=True, pack=1)'),
        _candidate("y = libdevice.tanh(x)", extra_import="from triton.language.extra.cuda import libdevice"),
        _candidate("y = tl.extra.cuda.libdevice.tanh(x)"),
        _candidate("y = x", host='y = torch.empty(n, device="cuda")'),
        _candidate("y = x", host="y = torch.empty_like(x).cuda()"),
        _candidate("y = x", host="torch.cuda.synchronize(); y = torch.empty_like(x)"),
    ],
    "static:ascend-dtype": [_candidate("y = tl.sqrt(x.to(tl.float64)).to(tl.float32)"),
                            _candidate("y = x.to(tl.float8e4nv).to(tl.float32)")],
    "static:ascend-dot": [_candidate("y = tl.sum(tl.dot(x[:, None] * x[None, :], x[:, None] * x[None, :], "
                                     "input_precision=\"tf32\"), axis=1)"),
                          _candidate("y = tl.sum(tl.dot(x[:, None] * x[None, :], x[:, None] * x[None, :], "
                                     "max_num_imprecise_acc=32), axis=1)")],
    "static:ascend-grid": [_candidate("y = x", launch="k[(70000,)](x, y, n, BLOCK=256)"),
                           _candidate("y = x", launch="k[(256, 512)](x, y, n, BLOCK=256)")],
    "static:ascend-buffer": [_candidate("y = x", launch="k[(1,)](x, y, n, BLOCK=65536)"),
                             _candidate("y = x + tl.sum(tl.zeros((256, 256), dtype=tl.float32))"),
                             _candidate("y = x + tl.sum(tl.arange(0, 1 << 17))")],
}


@pytest.mark.parametrize("rule,code", [(rule, code) for rule, codes in CASES.items() for code in codes])
def test_rule_rejects_its_construct_on_ascend_only(rule, code):
    assert _ascend_rules(code) == [rule], code
    assert _ascend_rules(code, platform=None) == []
    assert _ascend_rules(code, platform="cuda") == []


@pytest.mark.parametrize("code", [
    _candidate("y = tl.sqrt(x.to(tl.float32))"),
    _candidate("y = x", launch="k[(65535,)](x, y, n, BLOCK=256)"),
    _candidate("y = x", launch="k[(40,)](x, y, n, BLOCK=32768)"),
    _candidate("y = tl.sum(tl.dot(x[:, None] * x[None, :], x[:, None] * x[None, :]), axis=1)"),
    _candidate("y = x", host="y = torch.empty(n, device=x.device)"),
])
def test_fitting_code_passes(code):
    assert _ascend_rules(code) == []


def test_builtin_reference_solutions_pass_the_ascend_rules():
    solutions = sorted(Path(__file__).parents[2].joinpath("atrl/tasks/builtin").rglob("*.solution.py"))
    assert solutions
    rejected = {p.name: _ascend_rules(p.read_text()) for p in solutions}
    assert {name: rules for name, rules in rejected.items() if rules} == {}


def test_every_ascend_rule_has_cases_here():
    from atrl.harness.feedback.failures import FAILURE_CLASSES
    from atrl.harness.static.ascend import RULES

    assert set(CASES) == set(RULES) and set(RULES) <= set(FAILURE_CLASSES)
