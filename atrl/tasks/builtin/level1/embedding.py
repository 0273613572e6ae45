"""Embedding lookup: out[b, s, :] = weight[indices[b, s], :], indices int64 in [0, NUM_EMBEDDINGS)."""

TASK = {
    "tags": ["gather", "embedding"],
    "dtype": "float32",
    "presets": {
        "small": {"NUM_EMBEDDINGS": 100, "EMBED_DIM": 48, "BATCH": 2, "SEQ": 10},
        "full": {"NUM_EMBEDDINGS": 32768, "EMBED_DIM": 2048, "BATCH": 64, "SEQ": 2048},
    },
}

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_EMBEDDINGS = 32768
EMBED_DIM = 2048
BATCH = 64
SEQ = 2048


class Model(nn.Module):
    def __init__(self, num_embeddings: int, embed_dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_embeddings, embed_dim))

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        return F.embedding(indices, self.weight)


def get_inputs():
    return [torch.randint(0, NUM_EMBEDDINGS, (BATCH, SEQ), dtype=torch.int64)]


def get_init_inputs():
    return [NUM_EMBEDDINGS, EMBED_DIM]
