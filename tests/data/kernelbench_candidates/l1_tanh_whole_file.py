# @echo-reference

import triton
import triton.language as tl


@triton.jit
def tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    # tanh(x) = sign(x) * (1 - e^{-2|x|}) / (1 + e^{-2|x|}): no overflow for large |x|
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    tl.store(y_ptr + offs, tl.where(x < 0, -t, t), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        tanh_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y


def check():
    x = get_inputs()[0]
    assert torch.allclose(ModelNew()(x), Model()(x), atol=1e-5)


if __name__ == "__main__":
    check()
