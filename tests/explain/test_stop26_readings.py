"""Readings added in stop 26. Before the blind sets: torch's capability-range warning for a GPU one minor above the
newest architecture of its build's major (a GB10, 12.1, against a build up to 12.0), whose kernels run there by CUDA's
binary compatibility rule. From the blind sets independent82-87 (C runtimes and NumPy, local LLM backends, GPU faults,
graph libraries, threads in Vietnamese, training frameworks' devices): a system glibc or libstdc++ older than a wheel
needs, NumPy's C API, CUDA packages on a Mac, a GPU lost from the bus, ECC and watchdog errors, illegal addresses, the
driver timing out without persistence, MIG's device count, CDI without a specification, PyG's and other extensions
built without CUDA, DGL's and PyG's optional libraries, precision settings a GPU lacks, Lightning's and accelerate's
'no GPU', integrated graphics, PTX features of newer GPUs, model files that are not GGUF. Each reading is checked next
to the log that must not get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from gpudoctor.explain.similar import unexplained_failure
from gpudoctor.model import Severity
from tests.explain.readings import first

RANGE = ("UserWarning:\n    Found GPU0 {name} which is of cuda capability {cc}.\n"
         "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n    ({low}) - ({high})\n")


def problems(text: str):
    """(code, severity, caused_by) of every finding, in explain's order."""
    return [(f.code, f.severity, f.caused_by) for f in explain_text(text).findings]


def test_a_later_minor_of_the_builds_newest_major_is_harmless():
    for name, cc, low, high in (("NVIDIA GB10", "12.1", "8.0", "12.0"), ("NVIDIA Thor", "11.0", "8.0", "11.0")):
        f = first(RANGE.format(name=name, cc=cc, low=low, high=high))
        assert f.code == "gpu-arch-unsupported" and f.severity == Severity.INFO, (name, f.title)
        assert "kernels run there" in f.title


def test_a_gpu_outside_the_range_by_major_or_below_its_minimum_is_still_an_error():
    for cc, low, high in (("6.1", "7.5", "12.0"), ("12.0", "5.0", "9.0"), ("8.0", "8.6", "12.0"),
                          ("3.7", "5.0", "9.0")):
        f = first(RANGE.format(name="NVIDIA GPU", cc=cc, low=low, high=high))
        assert f.code == "gpu-arch-unsupported" and f.severity == Severity.ERROR, (cc, low, high)
    # a range without a device capability to compare is read as it reads
    bare = "Minimum and Maximum cuda capability supported by this version of PyTorch is\n    (8.0) - (12.0)\n"
    assert first(bare).severity == Severity.ERROR


def test_a_system_glibc_older_than_the_wheel_is_the_platform():
    for line in ("ImportError: /lib64/libm.so.6: version `GLIBC_2.23' not found (required by "
                 "lib/python3.7/site-packages/jaxlib/xla_extension.so)",
                 "OSError: /lib/x86_64-linux-gnu/libc.so.6: version 'GLIBC_2.28' not found (required by "
                 "/opt/env/lib/python3.11/site-packages/torch/lib/libtorch_python.so)"):
        f = first(line)
        assert f.code == "platform-unsupported" and "glibc" in f.title and "GLIBC_2." in f.title, line
    # glibc's private symbol version and a platform string name no missing release
    assert not [p for p in problems("version `GLIBC_PRIVATE' not found (required by ./a.out)") if p[0] == "platform-unsupported"]
    assert not problems("Python platform: Linux-6.2.0-37-generic-x86_64-with-glibc2.37\n")


def test_which_libstdcxx_was_loaded_decides_between_the_environment_and_the_os():
    required = " (required by {by})"
    conda = "ImportError: /opt/miniconda/bin/../lib/libstdc++.so.6: version `GLIBCXX_3.4.26' not found" + required
    f = first(conda.format(by="/opt/miniconda/lib/python3.7/site-packages/onnxruntime/capi/x.so"))
    assert f.code == "framework-import-failed" and "environment's libstdc++" in f.title
    system = "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found" + required
    f = first(system.format(by="~/miniconda3/envs/a/lib/python3.10/site-packages/torch/lib/libtorch_python.so"))
    assert f.code == "framework-import-failed" and "system's libstdc++ was loaded" in f.title
    # the OS's own Python loading a wheel built for a newer OS: the platform
    f = first(system.format(by="/usr/local/lib/python3.8/dist-packages/onnxruntime/capi/x.so"))
    assert f.code == "platform-unsupported" and "GLIBCXX_3.4.30" in f.title


def test_numpys_c_api_version_mismatch_is_the_packages():
    f = first("RuntimeError: module compiled against API version 0xc but this version of numpy is 0xa\n"
              "ImportError: numpy.core.multiarray failed to import\n")
    assert f.code == "conflicting-packages" and "0xc" in f.title and "0xa" in f.title


POETRY_GPU = "  - Installing onnxruntime-gpu (1.15.0): Failed\n  Unable to find installation candidates for onnxruntime-gpu (1.15.0)\n"


def test_a_cuda_package_poetry_cannot_install_on_a_mac_is_no_build_not_the_python():
    assert first("I tried it on MacOS with python 3.10.16\n" + POETRY_GPU).code == "no-matching-build"
    assert first("I tried it on Ubuntu with python 3.13.0\n" + POETRY_GPU).code == "python-unsupported"


def test_gpu_faults_are_read_as_the_gpu():
    f = first("Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the system to recover "
              "this GPU\n")
    assert f.code == "gpu-unavailable" and "0000:02:00.0" in f.title
    lost = problems("Failure during compute: CUDA_ERROR_UNKNOWN\n"
                    "[74889.644138] NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.\n")
    assert lost[0][0] == "gpu-unavailable" and ("uvm-not-loaded", Severity.ERROR, "gpu-unavailable") in lost
    assert first("NVRM: Xid (PCI:0000:3b:00): 48, An uncorrectable double bit error (DBE) has been detected\n").code \
        == "gpu-op-failed"
    assert first("RuntimeError: CUDA error: uncorrectable ECC error encountered\n").code == "gpu-op-failed"
    assert first("SystemError: CUDA_ERROR_LAUNCH_TIMEOUT\n").code == "gpu-op-failed"
    # an Xid that is most often the program's own (13: a graphics engine exception) is not read as the hardware
    assert not [p for p in problems("NVRM: Xid (PCI:0000:01:00): 13, Graphics SM Warp Exception\n")
                if p[0] in ("gpu-op-failed", "gpu-unavailable")]


def test_an_illegal_address_is_the_programs_unless_the_environment_failed_first():
    f = first("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert f.code == "not-environment" and "compute-sanitizer" in " ".join(f.fix)
    log = ("CUDA driver version is insufficient for CUDA runtime version\n"
           "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert first(log).code == "driver-too-old"


def test_the_container_toolkit_timing_out_is_persistence_not_the_container():
    log = ("$ sudo docker run --rm --gpus all nvidia/cuda:11.0.3-base-ubuntu20.04 nvidia-smi\n"
           "nvidia-container-cli: initialization error: driver rpc error: timed out: unknown.\n")
    f = first(log)
    assert f.code == "cuda-init-failed" and "persistence" in f.title
    other = "nvidia-container-cli: initialization error: driver error: failed to process request: unknown.\n"
    assert "persistence" not in first(other).title


def test_mig_and_other_device_counts_torch_asserts_on():
    f = first('RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "CUDAContext.cpp":49\n')
    assert f.code == "invalid-device-ordinal" and any("MIG-" in step for step in f.fix)


def test_no_cdi_specification_is_a_container_without_gpus():
    assert first("$ nvidia-ctk cdi list\nINFO[0000] Found 0 CDI devices\n").code == "container-no-gpu-access"
    assert not problems("INFO[0000] Found 2 CDI devices\nnvidia.com/gpu=0\nnvidia.com/gpu=all\n")


def test_extensions_built_without_cuda_are_cpu_builds_and_other_cudas_are_conflicts():
    pyg = ("RuntimeError: Detected that PyTorch and torch_sparse were compiled with different CUDA versions. PyTorch "
           "has CUDA version {torch} and torch_sparse has CUDA version {ext}. Please reinstall the torch_sparse that "
           "matches your PyTorch install.")
    without = problems(pyg.format(torch="10.1", ext="0.0"))
    assert [p[0] for p in without] == ["cpu-only-build"]
    assert first(pyg.format(torch="10.2", ext="11.0")).code == "conflicting-packages"
    for line in ("RuntimeError: Not compiled with CUDA support", "RuntimeError: Not compiled with GPU support",
                 "RuntimeError: Not compiled with gpu"):
        f = first(line)
        assert f.code == "cpu-only-build" and "extension" in f.title, line
    # torch's own CPU build says it in other words, read by its own signature
    assert "extension" not in first("AssertionError: Torch not compiled with CUDA enabled").title


def test_optional_libraries_of_dgl_and_pyg_are_harmless():
    dgl = ("/opt/dgl/src/runtime/tensordispatch.cc:43: TensorDispatcher: dlopen failed: libtorch_cuda.so: cannot "
           "open shared object file: No such file or directory\n")
    assert not [p for p in problems(dgl) if p[1] != Severity.INFO]
    assert first("OSError: libtorch_cuda.so: cannot open shared object file: No such file or directory\n").code \
        == "cpu-only-build"
    pyg = ("UserWarning: The usage of `scatter(reduce='max')` can be accelerated via the 'torch-scatter' package, "
           "but it was not found\n  warnings.warn(\n")
    assert not [p for p in problems(pyg) if p[1] != Severity.INFO]


def test_a_sentence_that_the_program_runs_despite_a_message_is_no_failure():
    never = lambda line: False  # noqa: E731 - no signature reads anything here
    assert unexplained_failure("Equibind appears to run in spite of this error.\n", never) is None
    assert unexplained_failure("the error impacts performance but does not impact usage.\n", never) is None
    assert unexplained_failure("the run stops with this error\n", never) is not None


def test_precision_settings_the_gpu_lacks_are_the_programs():
    for line in ("ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with "
                 "cuda>=11.0", "ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7"):
        assert first(line).code == "not-environment", line


def test_training_frameworks_that_find_no_gpu():
    f = first("pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUs requested but none are "
              "available.\n")
    assert f.code == "framework-gpu-not-detected" and f.severity == Severity.ERROR
    f = first("torch 1.13.1+cpu\nMisconfigurationException: GPUAccelerator can not run on your system since the "
              "accelerator is not available.\n")
    assert f.code == "cpu-only-build"
    accelerate = 'File "E:\\sd-scripts\\train_network.py", line 1017, in train\nValueError: fp16 mixed precision ' \
                 'requires a GPU\n'
    assert first(accelerate).code == "cpu-only-build"  # native Windows, nothing else: the CPU wheel
    repl = ">>> import torch\n>>> torch.cuda.is_available()\nTrue\n"
    assert first(accelerate + repl).code == "no-visible-gpu"  # torch sees it outside the launcher


def test_mixed_precision_turning_itself_off():
    amp = "UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.\n"
    assert first(amp).severity == Severity.WARNING
    assert first("Remove the following warning when run on CPU:\n" + amp).severity == Severity.INFO
    assert first("I have integrated graphics only\n" + amp).code == "no-nvidia-gpu"
    assert first("I have integrated graphics and an RTX 3060\n" + amp).code != "no-nvidia-gpu"


def test_a_ptx_feature_of_a_newer_gpu_is_the_architecture():
    f = first("ptxas /tmp/x.ptx, line 709; error   : Feature '.m16n8k16' requires .target sm_80 or higher\n")
    assert f.code == "gpu-arch-unsupported" and "sm_80" in f.title


def test_a_model_file_that_is_not_gguf_is_the_programs_input():
    f = first("gguf_init_from_file: invalid magic number 67676a74\nerror loading model: llama_model_loader: failed\n")
    assert f.code == "not-environment" and "GGUF" in f.title
