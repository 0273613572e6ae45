# @echo-reference

import triton
import triton.language as tl


@triton.jit
def argmin_kernel(x_ptr, idx_ptr, R, inner, BLOCK_I: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    mask = i < inner
    base = x_ptr + o * R * inner + i
    best = tl.load(base, mask=mask, other=float("inf"))
    best_idx = tl.zeros([BLOCK_I], tl.int64)
    for r in range(1, R):
        v = tl.load(base + r * inner, mask=mask, other=float("inf"))
        better = v < best
        best = tl.where(better, v, best)
        best_idx = tl.where(better, r, best_idx)
    tl.store(idx_ptr + o * inner + i, best_idx, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        d = self.dim % x.dim()
        outer = 1
        for s in x.shape[:d]:
            outer *= s
        R = x.shape[d]
        inner = x.numel() // (outer * R)
        out = torch.empty(x.shape[:d] + x.shape[d + 1:], device=x.device, dtype=torch.long)
        argmin_kernel[(outer, triton.cdiv(inner, 128))](x, out, R, inner, BLOCK_I=128)
        return out


if __name__ == "__main__":
    m = ModelNew(*get_init_inputs())
    x = get_inputs()[0]
    assert torch.equal(m(x), Model(*get_init_inputs())(x))
