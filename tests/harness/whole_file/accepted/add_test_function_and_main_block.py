# task: builtin/add
# style: a self-test that fails if it runs and a __main__ block that never ends if it runs
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    a = tl.load(x_ptr + offsets, mask=mask)
    b = tl.load(y_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, a + b, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = y.contiguous()
        z = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 512),)](x, y, z, n, BLOCK=512)
        return z


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


ROWS = 16384
COLS = 16384


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []


def test_matches_reference():
    model = Model()
    model_new = ModelNew()
    x, y = get_inputs()
    expected = model(x, y)
    actual = model_new(x, y)
    assert torch.allclose(expected, actual, atol=1e-5), "mismatch"
    raise RuntimeError("the self-test ran: the harness must never run it")


if __name__ == "__main__":
    test_matches_reference()
    while True:
        pass
