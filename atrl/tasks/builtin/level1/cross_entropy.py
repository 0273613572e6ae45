"""Cross-entropy over logits, mean over the batch:
loss = mean_i (logsumexp_j logits[i, j] - logits[i, target[i]]), targets int64 in [0, CLASSES)."""

TASK = {
    "tags": ["loss", "cross_entropy"],
    "dtype": "float32",
    "presets": {"small": {"BATCH": 20, "CLASSES": 300}, "full": {"BATCH": 65536, "CLASSES": 4096}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 65536
CLASSES = 4096


class Model(nn.Module):
    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target)


def get_inputs():
    return [3.0 * torch.randn(BATCH, CLASSES), torch.randint(0, CLASSES, (BATCH,), dtype=torch.int64)]


def get_init_inputs():
    return []
