# @echo-reference

import triton
import triton.language as tl


@triton.jit
def small_k_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, sam, sak, sbk, sbn, scm, scn,
                          BM: tl.constexpr, BN: tl.constexpr):
    """K is tiny (32): one dot per output tile, no loop."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * sam + rk[None, :] * sak, mask=rm[:, None] < M, other=0.0)
    b = tl.load(b_ptr + rk[:, None] * sbk + rn[None, :] * sbn, mask=rn[None, :] < N, other=0.0)
    c = tl.dot(a, b, input_precision="ieee")
    offs = rm[:, None].to(tl.int64) * scm + rn[None, :] * scn
    tl.store(c_ptr + offs, c, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A, B):
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), device=A.device, dtype=A.dtype)
        grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
        small_k_matmul_kernel[grid](A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                                    C.stride(0), C.stride(1), BM=128, BN=128)
        return C


if __name__ == "__main__":
    A, B = get_inputs()
    print(torch.allclose(ModelNew()(A, B), Model()(A, B), atol=1e-4))
