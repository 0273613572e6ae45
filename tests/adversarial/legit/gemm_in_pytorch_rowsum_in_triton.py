# class: partial-policy fusion: the reference's own GEMM stays in PyTorch, the row sum and scale are one Triton kernel
# task: tasks/gemm_sum_partial.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_scale_kernel(y_ptr, out_ptr, n_cols, stride_row, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        acc += tl.load(y_ptr + row * stride_row + start + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0) * scale)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = (x @ self.gemm.weight.T).contiguous()  # the reference's GEMM, in PyTorch
        out = torch.empty(y.shape[0], 1, device=y.device, dtype=y.dtype)
        row_sum_scale_kernel[(y.shape[0],)](y, out, y.shape[1], y.stride(0), 0.5, BLOCK=256)
        return out
