"""What a kernel body may call: `tl`, `@triton.jit` helpers, and plain Python only on compile-time
values; a plain helper on tensors, a lambda or `.handle` is host code (`static:host-code-in-kernel`)."""

from __future__ import annotations

import pytest
from test_static import FORWARD
from test_static import HEADER as STATIC_HEADER

from atrl.harness.static.checks import check_static

# test_static's candidate, its kernel computing `y` from `x` in `{body}`, with `{helpers}` before it
HEADER = (STATIC_HEADER.replace("{", "{{").replace("}", "}}")
          .replace("import triton.language as tl\n", "import triton.language as tl\nimport numpy as np\n\n\n{helpers}\n")
          .replace("    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)",
                   "    {body}\n    tl.store(y_ptr + offs, y, mask=mask)"))


def rules(helpers: str, body: str) -> list[str]:
    return [v.rule for v in check_static(HEADER.format(helpers=helpers, body=body) + FORWARD)]


@pytest.mark.parametrize(("helpers", "body"), [
    ("def host_gelu(t):\n    t.handle.data[...] = np.tanh(t.handle.data)\n    return t", "y = host_gelu(x)"),
    ("def host_relu(t, scale):\n    return t", "y = host_relu(tl.maximum(x, 0.0), 1.0)"),
    ("class Ops:\n    @staticmethod\n    def relu(t):\n        return t", "y = Ops.relu(x)"),
    ("", "y = x\n    x.handle.data[...] = 0"),
    ("", "y = x\n    buffer = getattr(x, 'handle')"),
    ("", "f = lambda t: t\n    y = f(x)"),
])
def test_host_code_called_from_a_kernel_is_rejected(helpers, body):
    assert "static:host-code-in-kernel" in rules(helpers, body)


@pytest.mark.parametrize(("helpers", "body"), [
    ("@triton.jit\ndef relu(t):\n    return tl.maximum(t, 0.0)", "y = relu(x)"),
    ("def half(block):\n    return block // 2", "HALF: tl.constexpr = half(BLOCK)\n    y = tl.maximum(x, 0.0) + 0 * HALF"),
    ("def half(block):\n    return block // 2", "quarter = BLOCK // 4\n    y = tl.maximum(x, 0.0) + 0 * half(quarter)"),
    ("SCALE = 1.0\n\ndef scaled(v):\n    return v * 2", "y = tl.maximum(x, 0.0) * scaled(SCALE)"),
    ("", "y = tl.maximum(x, 0.0)"),
])
def test_tl_jit_helpers_and_compile_time_helpers_pass(helpers, body):
    assert "static:host-code-in-kernel" not in rules(helpers, body)
