# @echo-reference

import triton
import triton.language as tl


@triton.jit
def relu_bias_kernel(y_ptr, bias_ptr, out_ptr, n, hw, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    channel = (offs // hw) % channels
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    b = tl.load(bias_ptr + channel, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(y, 0.0) + b, mask=mask)


class ModelNew(Model):
    """Same parameters as Model (its constructor is inherited); ReLU + bias fused after the conv."""

    def forward(self, x):
        y = self.conv(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        hw = y.shape[2] * y.shape[3]
        relu_bias_kernel[(triton.cdiv(n, 1024),)](y, self.bias, out, n, hw, y.shape[1], BLOCK=1024)
        return out
