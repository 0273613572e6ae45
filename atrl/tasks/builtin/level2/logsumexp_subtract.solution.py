"""Row log-sum-exp subtracted from its row, in one Triton kernel: y[i, j] = x[i, j] − lse_i with
lse_i = m_i + log Σ_k exp(x[i, k] − m_i), m_i = max_k x[i, k].

One program per row. The first sweep keeps a running maximum and a running sum of exponentials
rescaled whenever the maximum grows (the online softmax recurrence), so rows of any length need only
two passes over memory; the second sweep writes x − lse. Masked columns load −∞ and add exp(−∞) = 0.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def logsumexp_subtract_kernel(x_ptr, y_ptr, N, stride_xm, stride_ym, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    # per-lane running max and rescaled sum; lanes are merged after the sweep
    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK):
        n = n0 + cols
        x = tl.load(x_ptr + row * stride_xm + n, mask=n < N, other=float("-inf"))
        m_new = tl.maximum(m, x)
        # lanes that have only seen -inf keep s = 0 (avoid exp(-inf - -inf) = nan)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    m_row = tl.max(m, axis=0)
    lane_scale = tl.where(m == float("-inf"), 0.0, tl.exp(m - m_row))
    lse = m_row + tl.log(tl.sum(s * lane_scale, axis=0))
    for n0 in range(0, N, BLOCK):
        n = n0 + cols
        mask = n < N
        x = tl.load(x_ptr + row * stride_xm + n, mask=mask, other=0.0)
        tl.store(y_ptr + row * stride_ym + n, x - lse, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the kernel walks columns with unit stride
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        logsumexp_subtract_kernel[(M,)](x, y, N, x.stride(0), y.stride(0),
                                        BLOCK=min(2048, triton.next_power_of_2(N)))
        return y
