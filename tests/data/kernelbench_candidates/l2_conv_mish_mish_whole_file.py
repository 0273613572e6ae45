# @echo-reference

import triton
import triton.language as tl


@triton.jit
def _mish(x):
    softplus = tl.maximum(x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x)))
    e = tl.exp(-2.0 * softplus)  # softplus >= 0, so tanh(softplus) = (1 - e) / (1 + e)
    return x * (1.0 - e) / (1.0 + e)


@triton.jit
def mish_mish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, _mish(_mish(x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        y = torch.empty_like(x)
        n = x.numel()
        mish_mish_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y


if __name__ == "__main__":
    model = ModelNew(*get_init_inputs())
    print(model(*get_inputs()).shape)
