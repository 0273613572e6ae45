# @echo-reference

import triton
import triton.language as tl


@triton.jit
def subtract_tanh_kernel(y_ptr, bias_ptr, out_ptr, n, hw, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    channel = (offs // hw) % channels
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) - tl.load(bias_ptr + channel, mask=mask, other=0.0)
    tl.store(out_ptr + offs, 1.0 - 2.0 / (tl.exp(2.0 * v) + 1.0), mask=mask)


class ModelNew(Model):
    """Same parameters as Model (its constructor is inherited); the bias subtraction and tanh are
    one Triton pass after the transposed convolution."""

    def forward(self, x):
        y = self.conv_transpose(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        hw = y.shape[2] * y.shape[3]
        subtract_tanh_kernel[(triton.cdiv(n, 1024),)](y, self.bias, out, n, hw, y.shape[1], BLOCK=1024)
        return out
