"""KL divergence between row distributions given as log-probabilities, batch mean:
loss = sum_{i,j} exp(t[i, j]) (t[i, j] - q[i, j]) / BATCH, with q the input and t the target log-probs."""

TASK = {
    "tags": ["loss", "kl_div"],
    "dtype": "float32",
    "presets": {"small": {"BATCH": 16, "CLASSES": 300}, "full": {"BATCH": 65536, "CLASSES": 4096}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 65536
CLASSES = 4096


class Model(nn.Module):
    def forward(self, log_q: torch.Tensor, log_t: torch.Tensor) -> torch.Tensor:
        return F.kl_div(log_q, log_t, reduction="batchmean", log_target=True)


def get_inputs():
    log_q = torch.log_softmax(torch.randn(BATCH, CLASSES), dim=-1)
    log_t = torch.log_softmax(2.0 * torch.randn(BATCH, CLASSES), dim=-1)
    return [log_q, log_t]


def get_init_inputs():
    return []
