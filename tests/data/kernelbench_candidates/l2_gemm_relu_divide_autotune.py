import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BM": 128, "BN": 128, "BK": 32}, num_warps=8, num_stages=3),
        triton.Config({"BM": 64, "BN": 128, "BK": 32}, num_warps=4, num_stages=4),
        triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4, num_stages=3),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def gemm_relu_div_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk, sym, syn, inv_divisor,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rm[:, None] * sxm + rk[None, :] * sxk, mask=(rm[:, None] < M) & (rk[None, :] < K),
                    other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + rk[:, None] * swk, mask=(rk[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    out = tl.maximum(acc, 0.0) * inv_divisor
    tl.store(y_ptr + rm[:, None] * sym + rn[None, :] * syn, out, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        M, K = x.shape
        N = self.linear.out_features
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        w = self.linear.weight
        grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
        gemm_relu_div_kernel[grid](x, w, self.linear.bias, y, M, N, K, x.stride(0), x.stride(1), w.stride(0),
                                   w.stride(1), y.stride(0), y.stride(1), 1.0 / self.divisor)
        return y
