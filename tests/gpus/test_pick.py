"""Choosing GPUs by free memory (pure), and the exports that make CUDA use them."""

from gpudoctor.facts.driver import NvmlGpu
from gpudoctor.gpus.pick import choose, exports_for, imported_frameworks, shortfall_message

MIB = 1024 * 1024


def gpu(index, free_mib, uuid=None):
    free = None if free_mib is None else free_mib * MIB
    return NvmlGpu(index=index, uuid=uuid or f"GPU-{index}", memory_free=free, memory_total=11264 * MIB)


def test_most_free_first_ties_keep_nvidia_smi_order():
    gpus = [gpu(0, 5000), gpu(1, 9000), gpu(2, 5000), gpu(3, 100)]
    assert [g.index for g in choose(gpus, 3)] == [1, 0, 2]


def test_min_free_and_unknown_free_memory_do_not_qualify():
    gpus = [gpu(0, 5000), gpu(1, None), gpu(2, 8000)]
    assert [g.index for g in choose(gpus, 3, min_free_mib=6000)] == [2]
    assert [g.index for g in choose(gpus, 3)] == [2, 0]


def test_a_gpu_in_mig_mode_is_never_picked_whole():
    mig = gpu(0, 40000)
    mig.mig_mode = True
    assert [g.index for g in choose([mig, gpu(1, 1000)], 2)] == [1]


def test_exports_use_pci_bus_order_for_indices_and_nothing_for_uuids():
    chosen = [gpu(2, 1), gpu(0, 1)]
    assert exports_for(chosen) == {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "2,0"}
    assert exports_for(chosen, uuid=True) == {"CUDA_VISIBLE_DEVICES": "GPU-2,GPU-0"}


def test_shortfall_says_what_is_free():
    gpus = [gpu(0, 5000), gpu(1, None)]
    text = shortfall_message(gpus, choose(gpus, 2, 6000), 2, 6000)
    assert text == ("only 0 of the 2 GPU(s) qualify, 2 wanted with at least 6000 MiB free "
                    "(free memory: GPU 0 5000 MiB, GPU 1 unknown)")


def test_imported_frameworks():
    assert imported_frameworks({"torch": object(), "numpy": object(), "jax": object()}) == ["torch", "jax"]
    assert imported_frameworks({"numpy": object()}) == []
