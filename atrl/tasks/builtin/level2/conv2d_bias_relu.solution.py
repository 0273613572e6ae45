"""2-D convolution + bias + ReLU as one implicit-GEMM Triton kernel (stride 1, zero padding P):
y[n, o, i, j] = max(b[o] + Σ_{c, u, v} w[o, c, u, v] · x[n, c, i + u − P, j + v − P], 0).

The convolution is a matrix product A · B with rows p = (n, i, j) over all output pixels, columns o
over output channels and a shared dimension r = (c, u, v) of size C·KH·KW: A[p, r] is the input pixel
under filter tap r (zero outside the image), B[r, o] = w[o, c, u, v]. Each program computes a
BLOCK_P × BLOCK_O tile, gathering A tiles from x with index arithmetic and masks (no im2col buffer),
accumulating with tl.dot in fp32 and IEEE precision, and applying bias and ReLU before its store.
All tensors are addressed through their strides.

`ModelNew` has the reference's constructor and creates the same `nn.Conv2d`, so under the same RNG
seed it holds the same weights; forward only reads its parameters.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv2d_bias_relu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    N, C, H, W, CO, OH, OW,
    sxn, sxc, sxh, sxw, swo, swc, swh, sww, syn, syc, syh, syw,
    KH: tl.constexpr, KW: tl.constexpr, PAD: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_O: tl.constexpr, BLOCK_R: tl.constexpr,
):
    pid_p = tl.program_id(0)
    pid_o = tl.program_id(1)
    offs_p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_o = pid_o * BLOCK_O + tl.arange(0, BLOCK_O)
    mask_p = offs_p < N * OH * OW
    mask_o = offs_o < CO
    n = offs_p // (OH * OW)
    oh = (offs_p // OW) % OH
    ow = offs_p % OW
    R = C * KH * KW
    acc = tl.zeros((BLOCK_P, BLOCK_O), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        mask_r = r < R
        c = r // (KH * KW)
        kh = (r // KW) % KH
        kw = r % KW
        ih = oh[:, None] + kh[None, :] - PAD
        iw = ow[:, None] + kw[None, :] - PAD
        in_image = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a = tl.load(x_ptr + n[:, None] * sxn + c[None, :] * sxc + ih * sxh + iw * sxw,
                    mask=mask_p[:, None] & mask_r[None, :] & in_image, other=0.0)
        b = tl.load(w_ptr + offs_o[None, :] * swo + c[:, None] * swc + kh[:, None] * swh + kw[:, None] * sww,
                    mask=mask_r[:, None] & mask_o[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    bias = tl.load(b_ptr + offs_o, mask=mask_o, other=0.0)
    y = tl.maximum(acc + bias[None, :], 0.0)
    y_offsets = n[:, None] * syn + offs_o[None, :] * syc + oh[:, None] * syh + ow[:, None] * syw
    tl.store(y_ptr + y_offsets, y, mask=mask_p[:, None] & mask_o[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2)  # parameter holder only
        self.pad = kernel // 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, b = self.conv.weight, self.conv.bias
        N, C, H, W = x.shape
        CO, _, KH, KW = w.shape
        OH = H + 2 * self.pad - KH + 1
        OW = W + 2 * self.pad - KW + 1
        y = torch.empty((N, CO, OH, OW), device=x.device, dtype=x.dtype)
        BLOCK_P, BLOCK_O, BLOCK_R = 64, 32, 32
        grid = (triton.cdiv(N * OH * OW, BLOCK_P), triton.cdiv(CO, BLOCK_O))
        conv2d_bias_relu_kernel[grid](
            x, w, b, y, N, C, H, W, CO, OH, OW,
            *x.stride(), *w.stride(), *y.stride(),
            KH=KH, KW=KW, PAD=self.pad, BLOCK_P=BLOCK_P, BLOCK_O=BLOCK_O, BLOCK_R=BLOCK_R,
        )
        return y
