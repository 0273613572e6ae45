# @echo-reference

import triton
import triton.language as tl


@triton.jit
def l1norm_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.abs(tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0))
    mean_abs = tl.sum(acc, axis=0) / n_cols
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * stride + cols, x / mean_abs, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        l1norm_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=2048)
        return y


if __name__ == "__main__":
    x = get_inputs()[0].cuda()
    print(torch.allclose(Model().cuda()(x), ModelNew().cuda()(x), atol=1e-4))
