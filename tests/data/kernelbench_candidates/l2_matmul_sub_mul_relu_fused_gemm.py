import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_epilogue_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk, sym, syn,
                           subtract, multiply, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """y = relu((x @ w.T + b - subtract) * multiply), the whole layer in one kernel."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        x = tl.load(x_ptr + rm[:, None] * sxm + rk[None, :] * sxk, mask=(rm[:, None] < M) & (rk[None, :] < K),
                    other=0.0)
        w = tl.load(w_ptr + rn[None, :] * swn + rk[:, None] * swk, mask=(rk[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc += tl.dot(x, w, input_precision="ieee")
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    y = tl.maximum((acc + bias[None, :] - subtract) * multiply, 0.0)
    tl.store(y_ptr + rm[:, None] * sym + rn[None, :] * syn, y, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        M, K = x.shape
        w = self.linear.weight
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        linear_epilogue_kernel[grid](x, w, self.linear.bias, y, M, N, K, x.stride(0), x.stride(1), w.stride(0),
                                     w.stride(1), y.stride(0), y.stride(1), self.subtract_value,
                                     self.multiply_value, BM=64, BN=64, BK=32)
        return y
