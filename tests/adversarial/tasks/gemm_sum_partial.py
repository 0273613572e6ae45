"""A KernelBench level-2 style chain under the partial policy (like "Gemm_Divide_Sum_Scaling"): a
GEMM with an nn.Linear weight of shape (OUT_FEATURES, IN_FEATURES), no bias, then a row sum and a
scale; x of shape (BATCH, IN_FEATURES), output of shape (BATCH, 1)."""

TASK = {
    "tags": ["matmul", "gemm", "reduction", "sum", "scale"],
    "dtype": "float32",
    "compute_policy": "partial",
    "presets": {
        "small": {"BATCH": 64, "IN_FEATURES": 128, "OUT_FEATURES": 512},
        "full": {"BATCH": 128, "IN_FEATURES": 1024, "OUT_FEATURES": 4096},
    },
}

import torch
import torch.nn as nn

BATCH = 128
IN_FEATURES = 1024
OUT_FEATURES = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x @ self.gemm.weight.T).sum(dim=1, keepdim=True) * 0.5


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
