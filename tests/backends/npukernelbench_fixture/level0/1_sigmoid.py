import json
import os

import torch
import torch.nn as nn


class Model(nn.Module):
    """Sigmoid, elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


def get_input_groups():
    dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
    with open(os.path.join(os.path.dirname(__file__), "1_sigmoid.json")) as f:
        cases = [json.loads(line)["inputs"] for line in f if line.strip()]
    return [[torch.randn(case[0]["shape"], dtype=dtypes[case[0]["dtype"]])] for case in cases]


def get_init_inputs():
    return []
