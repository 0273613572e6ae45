"""The strict PyTorch-compute rule and tensors built from host values (shapes, constants): shape
arithmetic on them is no compute of the task, until a kernel, a helper or tensor data writes into them;
and a Triton kernel's own methods (`kernel.warmup(...)`) return a compiled-kernel handle, not data."""

from __future__ import annotations

import pytest
from test_static import HEADER, line_of

from atrl.harness.static.checks import check_static


def forward(body: str, prelude: str = "") -> str:
    """A candidate whose ModelNew.forward(self, x) runs `body` (lines, 8-space indented)."""
    lines = "\n".join(f"        {line}" for line in body.strip().splitlines())
    return HEADER + prelude + f"\nclass ModelNew(nn.Module):\n    def forward(self, x):\n{lines}\n"


def compute_lines(code: str) -> list[int]:
    return [v.line for v in check_static(code) if v.rule == "static:pytorch-compute"]


LAUNCH = "relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)"


@pytest.mark.parametrize("outer", [
    "outer = int(torch.tensor(x.shape[:1]).prod().item())",
    "outer = torch.tensor(x.shape[:1]).prod().item()",
    "outer = int(torch.prod(torch.tensor(x.shape[:1])))",
    "outer = torch.as_tensor(list(x.shape[:1])).prod().tolist()",
])
def test_shape_arithmetic_on_a_tensor_built_from_the_shape_is_not_compute(outer):
    code = forward(f"""
{outer}
n = x.numel() // outer * outer
y = torch.empty_like(x)
{LAUNCH}
return y""")
    assert compute_lines(code) == []


@pytest.mark.parametrize("how", [
    "relu_kernel[(1,)](x, buf, n, BLOCK=1024)",
    "helper(x, buf)",
    "buf.copy_(x.flatten()[:1])",
    "buf[0] = x[0, 0]",
    "torch.abs(x[0, :1], out=buf)",
])
def test_a_host_built_tensor_that_received_tensor_data_is_data(how):
    code = forward(f"""
buf = torch.tensor([0.0])
{how}
total = buf.sum()
n = x.numel()
y = torch.empty_like(x)
{LAUNCH}
return y""", prelude="""
def helper(a, b):
    relu_kernel[(1,)](a, b, 1, BLOCK=1024)
""")
    assert line_of(code, "total = buf.sum()") in compute_lines(code)


def test_a_host_built_tensor_kept_on_self_and_launched_on_is_data():
    code = forward(f"""
self.buf = torch.tensor([0.0])
relu_kernel[(1,)](x, self.buf, 1, BLOCK=1024)
total = self.buf.sum()
n = x.numel()
y = torch.empty_like(x)
{LAUNCH}
return y""")
    assert line_of(code, "total = self.buf.sum()") in compute_lines(code)


def test_a_kernels_warmup_handle_is_not_tensor_data():
    code = forward("""
n = x.numel()
y = torch.empty_like(x)
kernel = relu_kernel.warmup(x, y, n, BLOCK=1024, grid=(1,))
kernel._init_handles()
n_regs = kernel.n_regs
occupancy = 65536 // (n_regs * 32 * 4) if n_regs > 0 else 8
kernel[(max(occupancy, 1),)](x, y, n, 1024)
return y""")
    assert compute_lines(code) == []


def test_data_computed_from_the_input_stays_data_on_a_kernel_handle_route():
    code = forward(f"""
n = x.numel()
y = torch.empty_like(x)
kernel = relu_kernel.warmup(x, y, n, BLOCK=1024, grid=(1,))
{LAUNCH}
return y.exp()""")
    assert line_of(code, "return y.exp()") in compute_lines(code)
