"""The interpreter's stand-in for CUDA: GPU idioms map to the CPU tensors, nothing else changes."""

import pytest
import torch
from torch import nn

from atrl.backends.cuda_on_cpu import CudaOnCpu


def test_cuda_idioms_mean_the_cpu_inside_and_nothing_outside():
    x = torch.randn(8)
    has_cuda = torch.cuda.is_available()
    with CudaOnCpu():
        assert x.is_cuda and x.cuda() is x
        assert torch.empty(3, device="cuda").device.type == "cpu"
        assert torch.zeros(2, device=torch.device("cuda", 0)).device.type == "cpu"
        assert x.to("cuda").device.type == "cpu" and x.to("cuda:0", torch.float64).dtype == torch.float64
        assert x.new_ones(2, device="cuda").device.type == "cpu"
        layer = nn.Linear(4, 4).cuda().to("cuda")
        assert all(p.device.type == "cpu" for p in layer.parameters())
        assert torch.equal(torch.relu(x), x.clamp(min=0))  # other ops untouched
        if not has_cuda:  # calls that could only fail on a torch without CUDA
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


@pytest.mark.skipif(torch.cuda.is_available(), reason="the stand-in applies to a torch without CUDA")
def test_is_available_is_true_for_the_candidates_code_and_false_for_the_judges(tmp_path):
    import sysconfig

    import atrl.backends.cuda_on_cpu as stand_in

    # a GPU answer's guard (`if not torch.cuda.is_available(): raise ...`), in a file of its own
    candidate = compile("def guard():\n    return torch.cuda.is_available()\n", str(tmp_path / "candidate.py"), "exec")
    namespace = {"torch": torch}
    exec(candidate, namespace)
    # the same call from the judge's package and from an installed library
    judge = compile("def guard():\n    return torch.cuda.is_available()\n", stand_in.__file__, "exec")
    library = compile("def guard():\n    return torch.cuda.is_available()\n",
                      sysconfig.get_paths()["purelib"] + "/some_library/probe.py", "exec")
    judge_ns, library_ns = {"torch": torch}, {"torch": torch}
    exec(judge, judge_ns)
    exec(library, library_ns)
    with CudaOnCpu():
        assert namespace["guard"]() is True
        assert judge_ns["guard"]() is False and library_ns["guard"]() is False
    assert namespace["guard"]() is False  # restored on exit
