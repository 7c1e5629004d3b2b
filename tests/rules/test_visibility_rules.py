"""Visibility rules: CUDA_VISIBLE_DEVICES, device order, misspellings and full GPUs."""

from gpudoctor.facts.driver import CudaDevice
from gpudoctor.model import Severity
from tests.factories import MIB, codes, finding, gpu_machine, problems, set_environment

MIXED = ["NVIDIA GeForce GTX 1080", "NVIDIA GeForce RTX 3090"]


def test_four_2080ti_with_gpus_2_and_3_full_points_at_0_and_1_by_free_memory():
    facts = gpu_machine(used_mib=[300, 10, 11000, 11100])
    found = finding(facts, "gpu-memory-full")
    assert found.severity == Severity.WARNING
    assert found.fix[0].startswith("export CUDA_VISIBLE_DEVICES=1,0 ")  # GPU 1 has the most free memory
    assert "pid 4242 (python train.py)" in found.detail


def test_full_gpus_fix_lists_free_gpus_most_free_first():
    facts = gpu_machine(used_mib=[0, 0, 11000, 11000])
    assert "CUDA_VISIBLE_DEVICES=0,1 " in finding(facts, "gpu-memory-full").fix[0]


def test_full_gpus_already_hidden_by_the_user_are_not_a_problem():
    facts = gpu_machine(used_mib=[0, 0, 11000, 11000], env={"CUDA_VISIBLE_DEVICES": "0,1"})
    assert "gpu-memory-full" not in codes(facts)


def test_every_visible_gpu_full_is_an_error():
    facts = gpu_machine(count=2, used_mib=[11000, 11000])
    assert finding(facts, "gpu-memory-full").severity == Severity.ERROR


def test_with_mixed_models_and_unknown_cuda_order_the_selector_uses_uuids():
    facts = gpu_machine(count=2, names=MIXED, used_mib=[11000, 0])
    fix = finding(facts, "gpu-memory-full").fix[0]
    assert "CUDA_VISIBLE_DEVICES=GPU-00000001-" in fix


def test_visible_devices_1_2_map_cuda0_to_gpu1():
    facts = gpu_machine(env={"CUDA_VISIBLE_DEVICES": "1,2"})
    mapping = [(m.logical, m.physical_index) for m in facts.visible_devices.mapping]
    assert mapping == [("cuda:0", 1), ("cuda:1", 2)] and problems(facts) == []


def test_libcuda_enumeration_wins_over_parsing():
    facts = gpu_machine(count=2, names=MIXED)
    devices = [CudaDevice(0, MIXED[1], pci_bus_id="0000:27:00.0"), CudaDevice(1, MIXED[0], pci_bus_id="0000:17:00.0")]
    set_environment(facts, {}, devices)
    assert [(m.logical, m.physical_index) for m in facts.visible_devices.mapping] == [("cuda:0", 1), ("cuda:1", 0)]
    assert "cuda:0→GPU 1" in finding(facts, "device-order-differs").detail


def test_pci_bus_id_order_silences_device_order_warning():
    assert "device-order-differs" not in codes(gpu_machine(count=2, names=MIXED, env={"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}))


def test_index_5_on_a_four_gpu_machine():
    facts = gpu_machine(env={"CUDA_VISIBLE_DEVICES": "5"})
    ordinal = finding(facts, "invalid-device-ordinal")
    assert ordinal.severity == Severity.ERROR and "0-3" in ordinal.detail
    assert finding(facts, "no-visible-gpu").caused_by == "invalid-device-ordinal"


def test_trailing_garbage_is_a_warning_that_names_what_cuda_uses():
    facts = gpu_machine(env={"CUDA_VISIBLE_DEVICES": "0,2,-1,1"})
    found = finding(facts, "invalid-visible-devices")
    assert found.severity == Severity.WARNING and "uses only 0,2" in found.detail
    assert "no-visible-gpu" not in codes(facts)


def test_duplicates_and_empty_hide_everything():
    assert "same GPU twice" in finding(gpu_machine(env={"CUDA_VISIBLE_DEVICES": "1,1"}), "no-visible-gpu").detail
    assert "set but empty" in finding(gpu_machine(env={"CUDA_VISIBLE_DEVICES": ""}), "no-visible-gpu").detail


def test_misspelled_visible_devices_leaves_every_gpu_visible():
    facts = gpu_machine(env={"CUDA_VISIBLE_DIVICES": "1"})
    found = finding(facts, "misspelled-env-var")
    assert "every GPU stays visible" in found.detail
    assert found.fix == ["unset CUDA_VISIBLE_DIVICES; export CUDA_VISIBLE_DEVICES=1"]
    assert len(facts.visible_devices.mapping) == 4


def test_lowercase_variable_is_a_misspelling_but_real_variables_are_not():
    facts = gpu_machine(env={"cuda_visible_devices": "0", "CUDA_CACHE_PATH": "/tmp", "CUDA_HOME": "/usr/local/cuda"})
    assert [f.evidence["set"] for f in [finding(facts, "misspelled-env-var")]] == ["cuda_visible_devices"]
    assert problems(facts) == ["misspelled-env-var"]
