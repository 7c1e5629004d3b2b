"""JAX's preallocation against the memory the GPUs have free (issue 10, memory at initialisation)."""

from __future__ import annotations

from tests.factories import codes, finding, gpu_machine


def jax_machine(used_mib, env=None):
    facts = gpu_machine(len(used_mib), memory_mib=16384, used_mib=used_mib, env=env)
    facts.frameworks.packages = {"jax": "0.4.30", "jax-cuda12-plugin": "0.4.30"}
    return facts


def test_a_gpu_half_used_by_another_process_cannot_take_jaxs_75_percent():
    f = finding(jax_machine([8192, 0]), "gpu-memory-preallocated")
    assert f.evidence["gpus"] == [0] and "75%" in f.detail and "8192 MiB free of 16384 MiB" in f.detail
    assert f.fix[0] == "export XLA_PYTHON_CLIENT_PREALLOCATE=false"
    assert f.fix[1] == "or export XLA_PYTHON_CLIENT_MEM_FRACTION=0.45"
    assert f.fix[2].startswith("or use the GPUs that have room: export CUDA_VISIBLE_DEVICES=GPU-00000001")


def test_preallocation_turned_off_or_a_smaller_fraction_is_silent():
    assert "gpu-memory-preallocated" not in codes(jax_machine([8192], {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}))
    assert "gpu-memory-preallocated" not in codes(jax_machine([8192], {"XLA_CLIENT_MEM_FRACTION": ".4"}))
    assert "gpu-memory-preallocated" in codes(jax_machine([8192], {"XLA_PYTHON_CLIENT_MEM_FRACTION": ".6"}))


def test_only_visible_gpus_count_and_no_jax_means_no_finding():
    assert "gpu-memory-preallocated" not in codes(jax_machine([8192, 0], {"CUDA_VISIBLE_DEVICES": "1"}))
    facts = gpu_machine(1, memory_mib=16384, used_mib=[8192])
    assert "gpu-memory-preallocated" not in codes(facts)
