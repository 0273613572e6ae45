"""Each phase's own GPU peak: the rollout's and the update's are told apart (their maximum is the
step's peak, as before), measured with a stand-in for torch.cuda's peak statistics."""

from __future__ import annotations

import torch

from atrl.rl.gpu_peaks import GIB, GpuPeaks


class FakeCuda:
    """Peak statistics of an allocator whose usage the test sets."""

    def __init__(self) -> None:
        self.allocated = self.reserved = 0

    def use(self, allocated_gib: float, reserved_gib: float) -> None:
        self.allocated = max(self.allocated, int(allocated_gib * GIB))
        self.reserved = max(self.reserved, int(reserved_gib * GIB))

    def reset_peak_memory_stats(self, device) -> None:
        self.allocated = self.reserved = 0

    def max_memory_allocated(self, device) -> int:
        return self.allocated

    def max_memory_reserved(self, device) -> int:
        return self.reserved


def test_each_phase_reports_its_own_peak_and_the_step_their_maximum():
    cuda = FakeCuda()
    cuda.use(50, 60)  # before the step: not this step's
    peaks = GpuPeaks(torch.device("cuda", 0), cuda)
    peaks.start()
    cuda.use(30, 36)
    peaks.end("rollout")
    cuda.use(12, 14)  # below the rollout's peak: read after a reset, not the running maximum
    peaks.end("update")
    assert peaks.record() == {"gpu_peak_rollout_gib": 30, "gpu_peak_update_gib": 12,
                              "gpu_peak_gib": 30, "gpu_peak_reserved_gib": 36}
    peaks.start()  # the next step starts afresh
    cuda.use(3, 4)
    peaks.end("rollout")
    assert peaks.record()["gpu_peak_gib"] == 3


def test_nothing_is_recorded_off_cuda():
    peaks = GpuPeaks(torch.device("cpu"), FakeCuda())
    peaks.start()
    peaks.end("rollout")
    assert peaks.record() == {}
