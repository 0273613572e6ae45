"""What each judge actor asks Ray for, and how many actors a new fleet gets (no Ray needed)."""

from atrl.harness.api import WORKERS_PER_GPU
from atrl.harness.distributed.fleet import FleetOptions, _default_actor_count, _resources
from atrl.harness.distributed.judge_actor import CPU_WORKERS_PER_ACTOR, JudgeSpec

NPU_NODE = {"CPU": 64.0, "NPU": 8.0, "memory": 1e12}
GPU_NODE = {"CPU": 64.0, "GPU": 8.0}
CPU_NODE = {"CPU": 8.0}


def test_a_cuda_actor_takes_one_gpu():
    assert _resources(JudgeSpec(backend="cuda"), FleetOptions(), GPU_NODE) == {
        "num_gpus": 1, "num_cpus": WORKERS_PER_GPU}
    assert _default_actor_count(JudgeSpec(backend="cuda"), FleetOptions(), GPU_NODE) == 8


def test_an_ascend_actor_takes_one_npu_where_the_cluster_has_npus():
    spec = JudgeSpec(backend="ascend", workers=3)
    assert _resources(spec, FleetOptions(), NPU_NODE) == {"num_gpus": 0, "num_cpus": 3, "resources": {"NPU": 1}}
    assert _resources(spec, FleetOptions(resource="atrl_judge"), NPU_NODE)["resources"] == {
        "NPU": 1, "atrl_judge": 1}
    assert _default_actor_count(spec, FleetOptions(), NPU_NODE) == 8


def test_ascend_without_npus_judges_on_cpu_worker_groups():
    spec = JudgeSpec(backend="ascend")
    assert _resources(spec, FleetOptions(), CPU_NODE) == {"num_gpus": 0, "num_cpus": CPU_WORKERS_PER_ACTOR}
    assert _default_actor_count(spec, FleetOptions(), CPU_NODE) == 8 // CPU_WORKERS_PER_ACTOR


def test_the_placement_resource_is_asked_for_on_every_backend():
    for spec, node in ((JudgeSpec(backend="cuda"), GPU_NODE), (JudgeSpec(backend="interpreter"), CPU_NODE)):
        assert _resources(spec, FleetOptions(resource="atrl_judge"), node)["resources"] == {"atrl_judge": 1}
