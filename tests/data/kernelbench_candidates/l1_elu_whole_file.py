# @echo-reference

import triton
import triton.language as tl


@triton.jit
def elu_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.where(x > 0, x, alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0))
    tl.store(y_ptr + offs, y, mask=m)


class ModelNew(nn.Module):
    def __init__(self, alpha: float = 1.0):
        super(ModelNew, self).__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        elu_kernel[(triton.cdiv(n, 1024),)](x, y, n, self.alpha, BLOCK=1024)
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    ref = Model(*get_init_inputs())
    new = ModelNew(*get_init_inputs())
    x = get_inputs()[0]
    print((ref(x) - new(x)).abs().max())
