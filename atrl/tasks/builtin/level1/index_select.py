"""Row selection: out[i, :] = x[index[i], :] (torch.index_select along dim 0), index int64, repeats allowed."""

TASK = {
    "tags": ["gather", "index_select"],
    "dtype": "float32",
    "presets": {
        "small": {"ROWS": 64, "COLS": 100, "NUM_INDICES": 40},
        "full": {"ROWS": 65536, "COLS": 4096, "NUM_INDICES": 65536},
    },
}

import torch
import torch.nn as nn

ROWS = 65536
COLS = 4096
NUM_INDICES = 65536


class Model(nn.Module):
    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, 0, index)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randint(0, ROWS, (NUM_INDICES,), dtype=torch.int64)]


def get_init_inputs():
    return []
