# @echo-reference

import triton
import triton.language as tl


@triton.jit
def mean_dim_kernel(x_ptr, y_ptr, R, inner, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    i_mask = i < inner
    acc = tl.zeros([BLOCK_R, BLOCK_I], tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        mask = (r[:, None] < R) & i_mask[None, :]
        acc += tl.load(x_ptr + o * R * inner + r[:, None] * inner + i[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + o * inner + i, tl.sum(acc, axis=0) / R, mask=i_mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        dim = self.dim % x.dim()
        R = x.shape[dim]
        outer = 1
        for s in x.shape[:dim]:
            outer *= s
        inner = x.numel() // (outer * R)
        out_shape = x.shape[:dim] + x.shape[dim + 1:]
        y = torch.empty(out_shape, device=x.device, dtype=x.dtype)
        mean_dim_kernel[(outer, triton.cdiv(inner, 128))](x, y, R, inner, BLOCK_R=16, BLOCK_I=128)
        return y


if __name__ == "__main__":
    model = Model(*get_init_inputs())
    new = ModelNew(*get_init_inputs())
    x = get_inputs()[0]
    print(torch.max(torch.abs(model(x) - new(x))))
