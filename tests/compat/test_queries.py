"""The questions the rules ask, on real scenarios."""

from __future__ import annotations

from gpudoctor import compat as C


def test_tf_1_14_needs_cuda_10_0_and_cudnn_7_4():
    r = C.tensorflow_release("1.14")
    assert (r.linux.cuda, r.linux.cudnn) == ("10.0", "7.4")
    assert r.linux.package == "tensorflow_gpu"


def test_python_3_13_is_not_in_tf_2_15():
    r = C.tensorflow_release("2.15.0")
    assert "3.13" not in r.python and "3.11" in r.python


def test_tf_2_15_and_cuda_pins_cudnn_8_9():
    r = C.tensorflow_release("2.15.1")
    assert r.and_cuda.cudnn.startswith("8.9.")
    assert r.and_cuda.pins["nvidia-cuda-runtime-cu12"].startswith("12.2.")


def test_tf_2_11_has_no_native_windows_gpu_build():
    r = C.tensorflow_release("2.11")
    assert r.linux is not None and r.windows is None
    assert C.tensorflow_release("2.10").windows.cuda == "11.2"


def test_cu124_torch_needs_525_60_13_under_minor_version_compat():
    req = C.min_driver_for_cuda("12.4")
    assert req.minor_version_compat_driver == "525.60.13"
    assert req.toolkit_driver == "550.54.14"
    assert any("PTX" in lim for lim in req.limits)
    assert C.driver_supports_cuda("525.60.13", "12.4") is True
    assert C.driver_supports_cuda("470.82.01", "12.4") is False
    assert C.driver_supports_cuda("530.30.02", "12.4", needs_ptx_jit=True) is False


def test_no_minor_version_compat_before_cuda_11():
    req = C.min_driver_for_cuda("10.1")
    assert req.minor_version_compat_driver is None and req.toolkit_driver == "418.39"
    assert C.driver_supports_cuda("410.48", "10.1") is False


def test_unknown_cuda_is_none_not_false():
    assert C.min_driver_for_cuda("12.7") is None
    assert C.driver_supports_cuda("999.1", "12.7") is None


def test_driver_470_82_runs_cuda_11_builds_at_most():
    nb = C.newest_builds_for_driver("470.82")
    assert nb.cuda_full == "11.4"  # toolkit drivers: 11.4 GA needs 470.42.01
    assert nb.cuda == "11.8"  # minor version compatibility: 11.x on >= 450.80.02
    assert nb.torch.variant == "cu118"
    assert "--index-url https://download.pytorch.org/whl/cu118" in nb.torch.command
    assert nb.tensorflow.cuda.startswith("11.")
    assert "tensorflow[and-cuda]" in nb.tensorflow.command


def test_newest_builds_respect_python():
    nb = C.newest_builds_for_driver("580.65.06", python="3.8")
    assert nb.torch.version.startswith("2.4.")
    assert C.tensorflow_release(nb.tensorflow.version).linux.python.count("3.8")


def test_torch_2_4_1_variants():
    r = C.torch_release("2.4.1+cu124")
    assert {v.name for v in r.variants} == {"cu118", "cu121", "cu124"}
    assert r.default_variant == "cu121"
    assert r.variant("cu124").cudnn == "9.1.0.70"


def test_torch_arch_list_with_ptx_covers_newer_gpu_and_drops_old_ones():
    r = C.torch_release("2.14")
    cu130 = r.variant("cu130")
    assert C.variant_runs_on(cu130, "12.0") is True  # RTX 5090
    assert C.variant_runs_on(cu130, "3.7") is False  # K80
    assert C.variant_runs_on(r.variant("cu126"), "12.0") is False  # stops at sm_90, no PTX
    assert C.variant_runs_on(C.torch_release("2.4.1").variant("cu121"), "8.6") is True  # pytorch/builder release/2.4
    assert C.variant_runs_on(C.torch_release("2.4.1").variant("cu121"), "3.7") is False  # only cu118 kept Kepler
    assert C.variant_runs_on(C.torch_release("1.7.1").variant("cu110"), "8.6") is None  # unknown list


def test_gpus_by_nvml_name():
    assert C.gpu_by_name("NVIDIA GeForce RTX 5090").compute_capability == "12.0"
    assert C.gpu_by_name("NVIDIA GeForce RTX 3090").architecture == "Ampere"
    assert C.gpu_by_name("Tesla K80").compute_capability == "3.7"
    assert C.gpu_by_name("NVIDIA A100-SXM4-40GB").compute_capability == "8.0"
    assert C.gpu_by_name("NVIDIA H100 80GB HBM3").architecture == "Hopper"
    assert C.gpu_by_name("NVIDIA RTX 4000 SFF Ada Generation").name == "NVIDIA RTX 4000 SFF Ada"
    assert C.gpu_by_name("Orin (nvgpu)") is None


def test_cuda_build_archs():
    assert C.cuda_build_archs("12.4").can_build_for("3.7") is False
    assert C.cuda_build_archs("13.0").min_compute_capability == "7.5"
    assert C.cuda_build_archs("11.8").min_compute_capability == "3.5"


def test_cudnn_support():
    pk = C.cudnn_cuda_support("9.10.2")
    assert pk[0].cuda_major == 12 and "12.9" in pk[0].cuda
    assert C.cudnn_cuda_support("7.0.5") == ()


def test_a_supported_range_rules_out_only_gpus_below_it():
    cu129 = C.torch_release("2.8.0").variant("cu129")
    assert cu129.arch_list == () and cu129.capability_range == ("7.0", "12.0")
    assert C.variant_runs_on(cu129, "6.1") is False  # below the range: torch itself refuses it
    assert C.variant_runs_on(cu129, "8.6") is None  # inside it: the kernels are still unknown
    assert C.variant_runs_on(cu129, "12.1") is None


def test_the_plain_wheels_of_2_11_to_2_14_are_the_cu130_variant():
    for version in ("2.11.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1"):
        release = C.torch_release(version)
        assert release.default_variant == "cu130", version
        assert C.pip_command(release, release.variant("cu130")) == f"pip install torch=={version}"
