"""2-D max pooling (window 3, stride 2, padding 1) then SiLU: m = maxpool(x), y = m · σ(m), σ(t) = 1/(1+e^{−t})."""

TASK = {
    "tags": ["fusion", "pooling", "activation", "max_pool2d", "silu"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 2, "CHANNELS": 3, "HEIGHT": 11, "WIDTH": 14},
        "full": {"BATCH": 128, "CHANNELS": 128, "HEIGHT": 128, "WIDTH": 128},
    },
}

import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 128
HEIGHT = 128
WIDTH = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.silu(self.pool(x))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
