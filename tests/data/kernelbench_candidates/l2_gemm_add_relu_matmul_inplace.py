import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_rows_kernel(y_ptr, bias_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    y = tl.load(y_ptr + row * stride + cols, mask=mask, other=0.0)
    b = tl.load(bias_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride + cols, tl.maximum(y + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = torch.matmul(x, self.gemm.weight.t())
        rows, cols = y.shape
        bias_relu_rows_kernel[(rows, triton.cdiv(cols, 512))](y, self.bias, cols, y.stride(0), BLOCK=512)
        return y
