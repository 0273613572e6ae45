"""The interpreter's stand-in for CUDA: GPU idioms map to the CPU tensors, nothing else changes."""

import pytest
import torch
from torch import nn

from atrl.backends.cuda_on_cpu import CudaOnCpu


def test_cuda_idioms_mean_the_cpu_inside_and_nothing_outside():
    x = torch.randn(8)
    with CudaOnCpu():
        assert x.is_cuda and x.cuda() is x
        assert torch.empty(3, device="cuda").device.type == "cpu"
        assert torch.zeros(2, device=torch.device("cuda", 0)).device.type == "cpu"
        assert x.to("cuda").device.type == "cpu" and x.to("cuda:0", torch.float64).dtype == torch.float64
        assert x.new_ones(2, device="cuda").device.type == "cpu"
        layer = nn.Linear(4, 4).cuda().to("cuda")
        assert all(p.device.type == "cpu" for p in layer.parameters())
        assert torch.equal(torch.relu(x), x.clamp(min=0))  # other ops untouched
        if not torch.cuda.is_available():  # calls that could only fail on a torch without CUDA
            torch.cuda.synchronize()
            assert torch.cuda.current_device() == 0
            assert torch.cuda.get_device_properties(0).multi_processor_count > 0
            assert torch.cuda.device_count() == 1
            with torch.cuda.device(x.device):  # Triton's tutorials launch inside it
                assert torch.cuda.current_device() == 0
    assert not x.is_cuda
    if not torch.cuda.is_available():
        with pytest.raises((AssertionError, RuntimeError)):  # restored on exit
            torch.cuda.synchronize()
    if not torch.cuda.is_available():
        with pytest.raises((AssertionError, RuntimeError)):  # the mode is gone: "cuda" is CUDA again
            torch.empty(1, device="cuda")
