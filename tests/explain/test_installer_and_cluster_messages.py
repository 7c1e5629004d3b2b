"""Readings added in stop 23 from the blind sets independent45-50 (clusters and notebooks, the newest era,
installers and build pipelines, Windows, memory, companions): Poetry's and uv's no-wheel messages, conda's __cuda
constraint that states the driver's CUDA, a CUDA ops setup.py that finds no GPU (inside `docker build` a container
without GPU access), pyxis/enroot containers on Slurm, a CPU torch asked for CUDA on a Mac, torch's DLLs on Windows 7,
XLA out of memory with preallocation off, an old nvcc's launch symbols, keras of another TensorFlow, index and dtype
errors of the program. Each reading is checked next to the log that must not get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from gpudoctor.explain.similar import FAILURE_RE
from tests.explain.readings import errors, first

POETRY = ("  - Installing torch (2.5.1+cu124): Failed\n\n"
          "    | Unable to find installation candidates for torch (2.5.1+cu124)\n")


def test_poetrys_missing_candidates_read_like_pips_none_found():
    f = first(POETRY)
    assert f.code == "python-unsupported" and "torch==2.5.1+cu124" in f.title
    assert "Poetry found no" in f.detail and "pip found" not in f.detail
    assert any("poetry env info" in step for step in f.fix)
    # pip's own wording keeps pip's words
    pip = first("ERROR: Could not find a version that satisfies the requirement torch==2.5.1+cu124 (from versions: none)")
    assert pip.code == "python-unsupported" and "pip found no" in pip.detail


def test_uv_says_which_tag_no_wheel_matched():
    abi = first("  ╰─▶ Because torch==2.5.1 has no wheels with a matching Python ABI tag (e.g., `cp313`) and you "
                "require torch==2.5.1, we can conclude that your requirements are unsatisfiable.")
    assert abi.code == "python-unsupported" and "cp313" in abi.detail
    platform = first("  ╰─▶ Because torch==2.5.1+cu124 has no wheels with a matching platform tag (e.g., "
                     "`macosx_14_0_arm64`) and you require torch==2.5.1+cu124, we can conclude that your requirements "
                     "are unsatisfiable.")
    assert platform.code == "no-matching-build" and "macosx_14_0_arm64" in platform.detail


def test_a_cpu_wheel_uv_could_not_install_is_not_an_installed_cpu_build():
    log = ("  ╰─▶ Because torch==2.1.0+cpu is unusable because no wheels are available with a matching Python ABI "
           "and you require torch==2.1.0+cpu, we can conclude that the requirements are unsatisfiable.")
    assert errors(log) == ["python-unsupported"]
    # the same version named as installed is the CPU build
    assert first("torch==2.1.0+cpu\nAssertionError: Torch not compiled with CUDA enabled").code == "cpu-only-build"


def test_condas_cuda_constraint_with_the_drivers_version_is_the_driver():
    f = first("Encountered problems while solving:\n"
              "  - package cudatoolkit-11.6.0-habf752d_9 has constraint __cuda >=11.6.0 conflicting with __cuda-10.2-0")
    assert f.code == "driver-too-old" and "10.2" in f.title and "11.6" in f.title
    assert len(errors("  - package cudatoolkit-11.6.0-habf752d_9 has constraint __cuda >=11.6.0 conflicting with "
                      "__cuda-10.2-0")) == 1  # one finding for the one cause
    # no driver at all (a login node) stays the build conda cannot install
    assert first("  - nothing provides __cuda needed by tensorflow-2.9.1-cuda112py310he87a039_0").code == \
        "no-matching-build"


OPS_SETUP = ('  File "setup.py", line 47, in get_extensions\n'
             "    raise NotImplementedError('Cuda is not availabel')\n"
             "NotImplementedError: Cuda is not availabel\n")


def test_ops_setup_without_a_gpu_is_torch_seeing_none_and_in_docker_build_the_container():
    f = first(OPS_SETUP)
    assert f.code == "framework-gpu-not-detected" and any("docker build" in step for step in f.fix)
    # cpp_extension's own warning on the same build is the same cause: one finding
    both = errors("No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n" + OPS_SETUP)
    assert both == ["framework-gpu-not-detected"]
    dockerfile = "ENV CUDA_HOME=/usr/local/cuda-11.3\nARG FORCE_CUDA=\"1\"\nRUN make.sh\n"
    assert first(OPS_SETUP + dockerfile).code == "container-no-gpu-access"


def test_pyxis_container_without_the_driver_is_the_container():
    log = ('srun --nodes=1 --gpus=2 --container-image="myimage" --pty bash -i\n'
           "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
           "installed a driver from http://www.nvidia.com/Download/index.aspx\n")
    f = first(log)
    assert f.code == "container-no-gpu-access" and any("NVIDIA_VISIBLE_DEVICES" in step for step in f.fix)
    # the same error on a plain machine is the driver library missing
    assert first(log.split("\n", 1)[1]).code == "libcuda-missing"


NOT_COMPILED = ('  File "{home}/app/env/lib/python3.10/site-packages/torch/cuda/__init__.py", line 284, in _lazy_init\n'
                '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
                "AssertionError: Torch not compiled with CUDA enabled\n")


def test_cuda_asked_of_torch_on_a_mac_is_the_platform():
    f = first(NOT_COMPILED.format(home="/Users/doms"))
    assert f.code == "platform-unsupported" and any("mps" in step for step in f.fix)
    # Windows' and WSL's home folders are not a Mac: the CPU build stays the cause
    assert first(NOT_COMPILED.format(home="C:/Users/doms")).code == "cpu-only-build"
    assert first(NOT_COMPILED.format(home="/mnt/c/Users/doms")).code == "cpu-only-build"
    assert first(NOT_COMPILED.format(home="/home/doms")).code == "cpu-only-build"


def test_torchs_dll_failing_on_windows_7_is_the_platform():
    dll = ('OSError: [WinError 126] The specified module was not found. Error loading '
           '"X:\\app\\_internal\\torch\\lib\\c10_cuda.dll" or one of its dependencies.')
    f = first("Uses version r245.2 on Windows 7 x64 with Nvidia GTX 980:\n" + dll)
    assert f.code == "platform-unsupported" and "Windows 7" in f.title
    # on Windows 10 the same failure is the DLL's dependencies
    assert first("Windows 10 x64, GTX 980\n" + dll).code == "dll-load-failed"


XLA_REQUEST = "XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 6.27GiB (6727663616B) on device ordinal 0\n"


def test_xla_out_of_memory_with_preallocation_off_is_the_program():
    f = first(XLA_REQUEST + 'os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"\n')
    assert f.code == "not-environment" and "6.27GiB" in f.detail
    assert first(XLA_REQUEST + "export XLA_PYTHON_CLIENT_ALLOCATOR=platform\n").code == "not-environment"
    # with the default preallocation the pool is the suspect
    assert first(XLA_REQUEST).code == "gpu-memory-preallocated"


def test_cuda_launch_symbols_of_an_old_nvcc_are_the_extensions_toolkit():
    f = first("ImportError: /env/lib/python3.7/site-packages/mmcv/_ext.cpython-37m-x86_64-linux-gnu.so: undefined "
              "symbol: cudaSetupArgument\nCuda compilation tools, release 9.2, V9.2.148\n")
    assert f.code == "extension-cuda-mismatch" and f.severity.value == "error" and "cudaSetupArgument" in f.title
    # a torch symbol the same extension lacks is a build for another torch
    assert first("ImportError: /env/lib/python3.7/site-packages/mmcv/_ext.cpython-37m-x86_64-linux-gnu.so: undefined "
                 "symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE").code == "conflicting-packages"


def test_keras_reaching_into_another_tensorflows_internals_is_the_pair():
    f = first("AttributeError: module 'tensorflow.compat.v2.__internal__.distribute' has no attribute "
              "'strategy_supports_no_merge_call'")
    assert f.code == "conflicting-packages" and "keras" in f.title
    assert first("AttributeError: module 'tensorflow._api.v1.compat.v2' has no attribute '__internal__'").code == \
        "conflicting-packages"


def test_index_and_dtype_errors_are_the_program():
    for line in ("IndexError: index out of range in self",
                 "RuntimeError: Invalid index in scatterAdd at /opt/conda/aten/src/TH/generic/THTensorEvenMoreMath.cpp:536",
                 "RuntimeError: index 18864 is out of bounds for dimension 1 with size 18864",
                 "RuntimeError: FlashAttention only support fp16 and bf16 data type"):
        assert first(line).code == "not-environment", line
    # flash-attn's GPU check is the GPU generation, not the program
    assert first("RuntimeError: FlashAttention only supports Ampere GPUs or newer.").code == "gpu-arch-unsupported"


def test_a_report_of_available_features_with_a_false_flag_is_no_failure():
    log = ("xFormers 0.0.16\nmemory_efficient_attention.cutlassF:               available\n"
           "is_triton_available:                               True\n"
           "is_functorch_available:                            False\n"
           "pytorch.version:                                   1.13.1+cu117\npytorch.cuda:                                      available\n"
           "gpu.name:                                          NVIDIA GeForce RTX 3090\n")
    assert explain_text(log).findings == []
    # torch answering False about CUDA is still a failure line the last resort reads; the feature flag is not
    assert FAILURE_RE.search("Is CUDA available: False") and FAILURE_RE.search("torch.cuda.is_available() returns False")
    assert not FAILURE_RE.search("is_functorch_available:                            False")


def test_pips_old_empty_version_list_and_nested_from_read_like_none():
    f = first("  Could not find a version that satisfies the requirement torch==1.12.1+cu113 (from -r requirements.txt "
              "(line 3)) (from versions: )\nPython 3.11.4 (tags/v3.11.4, Jun  7 2023) [MSC v.1934 64 bit (AMD64)] on win32")
    assert f.evidence.get("versions") == "none"
    # the same on a Raspberry Pi is the CPU, not the Python
    assert first("pi@pikaraoke:~ $ pip3 install torch\n  Could not find a version that satisfies the requirement torch "
                 "(from versions: )").code == "no-matching-build"


def test_offered_releases_say_the_platform_when_the_release_supports_this_python():
    # TensorFlow 2.9 had Python 3.8 wheels, but not for Apple silicon: only 2.13 is offered there
    log = ("Python 3.8.17\nERROR: Could not find a version that satisfies the requirement tensorflow==2.9.3 "
           "(from versions: 2.13.0rc0, 2.13.0)")
    assert first(log).code == "no-matching-build"
    # an offer of newer releases only, for a Python the pinned release lacks, is the Python
    assert first("Python 3.11.4\nERROR: Could not find a version that satisfies the requirement torch==1.12.1+cu113 "
                 "(from versions: 2.0.0, 2.0.1)").code == "python-unsupported"


def test_a_wheel_library_with_its_sibling_from_another_copy_names_the_copies():
    line = ("OSError: /home/u/miniconda3/lib/python3.9/site-packages/torch/lib/../../nvidia/cublas/lib/libcublas.so.11: "
            "undefined symbol: cublasLtGetStatusString, version libcublasLt.so.11\n")
    f = first(line)
    assert f.code == "multiple-cuda-installs" and "Another copy of libcublasLt" in f.title
    f = first(line + "$ locate libcublasLt.so.11\n/home/u/miniconda3/lib/libcublasLt.so.11\n")
    assert f.code == "multiple-cuda-installs" and f.severity.value == "error"
    assert "/home/u/miniconda3/lib/libcublasLt.so.11" in f.title


def test_driver_layer_messages_of_older_tools():
    assert first("nvidia-docker | 2016/04/09 00:07:59 Error: unsupported CUDA version: 7.5 < 6.5").code == \
        "driver-too-old"
    f = first("modprobe: ERROR: ../libkmod/libkmod-module.c:832 kmod_module_insert_module() could not find module by "
              "name='off'")
    assert f.code == "driver-not-loaded" and any("prime-select" in step for step in f.fix)
    wrapped = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1717] \n\tIgnoring visible gpu device (device: 0, "
               "name: Tesla M60, compute capability: 5.2) with Cuda compute capability 5.2. \n"
               "\tThe minimum required Cuda capability is 6.0.\n")
    assert first(wrapped).code == "gpu-arch-unsupported"


def test_torchs_too_old_warning_about_an_amd_gpu_is_harmless():
    warning = ("UserWarning: \n    Found GPU0 {name} which is of cuda capability 3.0.\n"
               "    PyTorch no longer supports this GPU because it is too old.\n")
    assert errors(warning.format(name="Ellesmere [Radeon RX 470/480/570/570X/580/580X]")) == []
    assert errors(warning.format(name="GeForce GTX 680")) == ["gpu-arch-unsupported"]


def test_the_python_fix_names_the_pythons_the_pinned_release_has_wheels_for():
    f = first(POETRY)  # no Python in the log: the tables still know torch 2.5.1's
    assert f.fix[0].startswith("Create an environment with Python 3.") and "3.X from that list" in f.fix[0]
    # a release the tables do not know keeps the general wording
    unknown = first("    | Unable to find installation candidates for torch (9.9.9)")
    assert "a Python the release supports" in unknown.fix[0]
