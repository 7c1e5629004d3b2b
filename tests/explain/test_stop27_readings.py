"""Readings added in stop 27, from the blind sets independent88-93 (headless rendering, HPC schedulers, model
servers, tabular ML, prebuilt images and CI, threads in Korean, Japanese and Russian) and independent94-99
(profilers, virtual machines, R and Julia, protein models, other frameworks, video pipelines): the driver's graphics
libraries (OptiX, EGL, Vulkan) on a host and in a container, CUDA-OpenGL interop under WSL 2, CUDA used while an
image is built, tensorflow beside tensorflow-gpu, servers compiled for one GPU architecture, RAPIDS' minimum GPU,
libnvJitLink shadowed by a stated system CUDA or mixed in a conda environment, and program mistakes that name no
GPU (a pybind call, a Triton model configuration, an unreachable gRPC server); CUPTI when the log profiles, the
performance counters an administrator must allow, NVTX, the open kernel modules Blackwell needs, the nvidia runtime
without a GPU request, NVDEC's driver library, R's torch, CUDA.jl, CuArrays, MindSpore's and MegEngine's checks,
OpenCV without CUDA, conda's platform builds, extensions of another Python, Windows' missing DLLs, damaged
libraries, DALI on Windows. Each reading is checked next to the log that must not get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from gpudoctor.model import Severity
from tests.explain.readings import first


def codes(text: str):
    return [f.code for f in explain_text(text).findings]


def assert_first_codes(cases):
    """Each log's first finding is the code it maps to."""
    for log, code in cases.items():
        assert first(log).code == code, log


def test_optix_without_its_driver_library_is_the_driver_on_a_host_and_the_capability_in_a_container():
    host = "Optix call (optixInit()) failed with code 7804 (line 152)\n"
    f = first(host)
    assert f.code == "libcuda-missing" and "libnvoptix" in f.title
    assert any("NVIDIA_DRIVER_CAPABILITIES" in step for step in f.fix)
    container = "docker run -it --gpus all render-slim bash\n" + host
    f = first(container)
    assert f.code == "container-no-gpu-access" and "graphics" in f.title
    assert f.evidence["context_rule"] == "graphics-libraries-not-in-the-container"
    # a CUDA library missing in a container with GPUs is not a graphics capability
    assert first("docker run --gpus all img\nImportError: libcudart.so.12: cannot open shared object file: "
                 "No such file or directory\n").code != "container-no-gpu-access"
    assert not codes("OptiX 7.7 SDK samples built fine; optixInit() returned OPTIX_SUCCESS\n")


def test_egl_finding_no_nvidia_display_is_the_drivers_egl_library_unless_the_machine_has_no_nvidia_gpu():
    f = first("[F glutil.cpp:338] eglInitialize() failed\n")
    assert f.code == "libcuda-missing" and "EGL" in f.title
    assert first("Init EGL\nDetected 0 devices\nRuntimeError: Failed to initialize EGL\n").code == "libcuda-missing"
    intel_only = ("Platform::WindowlessEglApplication::tryCreateContext(): unable to find CUDA device 0 among 2 EGL "
                  "devices in total\ngraphics card:\n                       Intel UHD Graphics 620\n")
    assert first(intel_only).code == "no-nvidia-gpu"
    # EGL torn down at exit (eglMakeCurrent in a destructor) is not a missing driver library
    at_exit = ("Exception ignored in: <function MjRenderContext.__del__ at 0x7f0f9c1ca940>\n"
               "OpenGL.raw.EGL._errors.EGLError: EGLError(\n\terr = EGL_NOT_INITIALIZED,\n"
               "\tbaseOperation = eglMakeCurrent,\n")
    assert "libcuda-missing" not in codes(at_exit)


def test_vulkan_without_the_nvidia_icd_is_the_drivers_library():
    log = ('RuntimeError: Failed to find a supported physical device "cuda:0"\n'
           "- ERROR: libXext.so.6: cannot open shared object file: No such file or directory\n"
           "- WARNING: terminator_CreateInstance: Failed to CreateInstance in ICD 0. Skipping ICD.\n")
    f = first(log)
    assert f.code == "libcuda-missing" and "Vulkan" in f.title
    assert any("vulkaninfo" in step for step in f.fix)


def test_cuda_opengl_interop_under_wsl_is_the_platform_not_the_wsl_setup():
    interop = "WSL2: cudaGraphicsGLRegisterImage failed: OS call failed or operation not supported on this OS\n"
    f = first(interop)
    assert f.code == "platform-unsupported" and "cudaGraphicsGLRegisterImage" in f.title
    # the same CUDA error from device discovery under WSL 2 is still the WSL set-up
    other = ("Linux version 5.15.133.1-microsoft-standard-WSL2\ncudaGetDeviceCount returned 304\n"
             "-> OS call failed or operation not supported on this OS\n")
    assert first(other).code != "platform-unsupported"


def test_cuda_used_while_an_image_is_built_is_the_build_not_the_driver():
    query = ("#7 1.236 cudaGetDeviceCount returned 35\n"
             "#7 1.236 -> CUDA driver version is insufficient for CUDA runtime version\n")
    f = first("$ docker build --no-cache .\n" + query)
    assert f.code == "container-no-gpu-access" and "built" in f.title
    assert f.evidence["context_rule"] == "cuda-used-during-an-image-build"
    assert first(query).code == "driver-too-old"


def test_tensorflow_beside_tensorflow_gpu_is_a_conflict_when_the_gpu_is_not_used():
    log = ('python -c "import tensorflow as tf; print(tf.test.is_gpu_available())"\nFalse\n'
           "pip show tensorflow-gpu\nName: tensorflow-gpu\nVersion: 1.15.4\n"
           "pip show tensorflow\nName: tensorflow\nVersion: 1.15.4\n")
    f = first(log)
    assert f.code == "conflicting-packages" and "tensorflow-gpu" in f.title
    only_gpu = ('python -c "import tensorflow as tf; print(tf.test.is_gpu_available())"\nFalse\n'
                "pip show tensorflow-gpu\nName: tensorflow-gpu\nVersion: 1.15.4\n")
    assert "conflicting-packages" not in codes(only_gpu)


def test_a_server_compiled_for_another_architecture_names_both_capabilities():
    f = first("Could not start backend: Runtime compute cap 75 is not compatible with compile time compute cap 80\n")
    assert f.code == "gpu-arch-unsupported" and "80" in f.title and "75" in f.title
    f = first("UserWarning: A GPU with NVIDIA Pascal™ (Compute Capability 6.0) or newer architecture is required.\n"
              "Detected GPU 0: Tesla M60\nDetected Compute Capability: 5.2\n")
    assert f.code == "gpu-arch-unsupported" and "Pascal" in f.title and "6.0" in f.title


def test_the_reporter_saying_the_machine_has_no_gpu_card():
    no_driver = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    assert first(no_driver + "this is a machine without gpu card\n").code == "no-nvidia-gpu"
    assert first(no_driver).code == "container-no-gpu-access"
    assert first(no_driver + "It should also run on a machine without GPU.\n").code == "container-no-gpu-access"


def test_the_cuda_link_names_the_toolkit_a_missing_soname_is_read_against():
    missing = ("RuntimeError: CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared "
               "object file: No such file or directory\n")
    link = "lrwxrwxrwx  1 root root   21 Jun  1 04:54 /usr/local/cuda -> /usr/local/cuda-13.0/\n"
    assert first(link + missing).code == "cuda-version-mismatch"
    assert first(missing).code == "cuda-library-missing"


NVJITLINK = ("ImportError: {path}/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, "
             "version libnvJitLink.so.12\n")
WHEEL = "~/venv/lib/python3.10/site-packages/torch/lib/../../nvidia/cusparse/lib"


def test_nvjitlink_shadowed_by_a_stated_older_system_cuda_is_two_copies():
    f = first("- **CUDA version**: 12.2\n" + NVJITLINK.format(path=WHEEL))
    assert f.code == "multiple-cuda-installs" and "12.2" in f.title
    assert any("LD_LIBRARY_PATH" in step for step in f.fix)
    # a stated CUDA as new as the symbol is not named as the copy that won; without the wheel's path the log
    # does not say where the two copies are, and the release found is what it reads
    f = first("- **CUDA version**: 12.6\n" + NVJITLINK.format(path=WHEEL))
    assert f.code == "multiple-cuda-installs" and "12.6" not in f.title
    assert first(NVJITLINK.format(path="/opt/libs")).code == "cuda-version-mismatch"


def test_nvjitlink_older_than_libcusparse_inside_one_conda_environment_is_mixed_packages():
    f = first(NVJITLINK.format(path="/opt/conda/bin/../lib"))
    assert f.code == "conflicting-packages" and "conda" in f.title
    assert any("conda list" in step for step in f.fix)


def test_program_mistakes_that_name_no_gpu():
    pybind = ("ERROR: TypeError: __init__(): incompatible constructor arguments. The following argument types "
              "are supported:\n")
    assert first(pybind).code == "not-environment"
    triton = ("UNAVAILABLE: Invalid argument: model 'pose', tensor 'input.1': the model expects 4 dimensions "
              "(shape [1,3,224,224]) but the model configuration specifies 4 dimensions (shape [1,3,224,244])\n")
    f = first(triton)
    assert f.code == "not-environment" and "input.1" in f.title
    grpc = "tritonclient.utils.InferenceServerException: [StatusCode.UNAVAILABLE] failed to connect to all addresses\n"
    assert first(grpc).code == "not-environment" and first(grpc).severity != Severity.ERROR
    assert "not-environment" not in codes("TypeError: expected str, bytes or os.PathLike object, not NoneType\n")


def test_containers_named_by_pyxis_github_actions_and_nvidia_docker():
    smi = "nvidia-smi: command not found\n"
    assert first("/__w/_temp/e57682ae.sh: line 1: " + smi).code == "container-no-gpu-access"
    assert first("/home/runner/work/_temp/e57682ae.sh: line 1: " + smi).code != "container-no-gpu-access"
    pyxis = "srun -p gpu --container-name=cuda-11.4.2 --gpus=1 --pty zsh\n./rtx: Optix Error: 'Library not found'\n"
    assert first(pyxis).code == "container-no-gpu-access"
    # nvidia-docker's wrapper is a container, not a GPU request (nvidia-docker 2 is --runtime=nvidia)
    egl = "$ nvidia-docker run --rm img\nterminate called after throwing an instance of 'std::runtime_error'\n  what():  Error EGL_BAD_PARAMETER\n"
    assert first(egl).code == "container-no-gpu-access"
    # ... while the host's own driver failing under nvidia-docker stays the host's
    smi = ("$ nvidia-docker run --rm nvidia/cuda nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with "
           "the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n")
    assert first(smi).code != "container-no-gpu-access"


CUPTI = ("W dso_loader.cc:64] Could not load dynamic library 'libcupti.so.11.4'; dlerror: libcupti.so.11.4: cannot open "
         "shared object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda-11.5/targets/x86_64-linux/lib/\n")


def test_cupti_is_optional_until_the_log_profiles():
    assert not [f for f in explain_text(CUPTI).findings if f.severity != Severity.INFO]
    assert any(n.id.startswith("optional:libcupti") for n in explain_text(CUPTI).notes)
    f = first("with tf.profiler.experimental.Profile('logdir'):\n" + CUPTI)
    assert f.code == "cuda-version-mismatch" and "11.4" in f.title and "11.5" in f.title
    # CUPTI's CUDA 11 sonames change with each minor: no wheel or conda command is offered for them
    assert not any("pip install" in step or "conda install" in step for step in f.fix)
    assert any("extras/CUPTI" in step for step in f.fix)
    searched = first("$ locate libcupti.so\n/usr/local/cuda-11.5/targets/x86_64-linux/lib/libcupti.so.11.5\n" + CUPTI)
    assert searched.code == "cuda-version-mismatch"


def test_profiler_counters_restricted_to_admins_are_a_note_not_an_error():
    for line in ("E cupti_tracer.cc:1307] function cupti_interface_->Subscribe( &subscriber_, (CUpti_CallbackFunc)"
                 "ApiCallback, this)failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\n",
                 "and got the error :\nERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                 "Performance Counters on the target device 0.\n"):
        result = explain_text(line)
        assert not [f for f in result.findings if f.severity != Severity.INFO], line
        assert any(n.id == "benign-profiler-counters-restricted" for n in result.notes)


def test_an_older_cupti_before_torchs_own_and_nvtx_missing():
    f = first("ImportError: ~/.local/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: "
              "cuptiActivityEnableDriverApi, version libcupti.so.12\n")
    assert f.code == "multiple-cuda-installs" and "libcupti.so.12" in f.title
    f = first("ImportError: libnvToolsExt.so.1: cannot open shared object file: No such file or directory\n")
    assert f.code == "cuda-library-missing" and "NVTX" in f.detail + f.title


def test_a_gpu_that_needs_the_open_kernel_modules_is_the_node_driver_even_on_kubernetes():
    line = "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2c3a) installed in this system requires use of the NVIDIA open kernel modules.\n"
    assert first(line).code == "driver-not-loaded" and "open kernel modules" in first(line).title
    assert first("kubectl describe node gpu-1 (k8s)\n" + line).code == "driver-not-loaded"


def test_the_nvidia_runtime_without_a_gpu_request():
    error = ("what():  OpenCV(4.5.4) memory.hpp:54: error: (-217:Gpu API call) no CUDA-capable device is detected in "
             "function 'ManagedPtr'\n")
    run = "sudo docker run --runtime=nvidia -it -e NVIDIA_DRIVER_CAPABILITIES=all ubuntu_opencv ./DeepSortTest\n"
    f = first(run + error)
    assert f.code == "container-no-gpu-access" and f.evidence["context_rule"] == "nvidia-runtime-without-visible-devices"
    for asks in ("sudo docker run --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all ubuntu_opencv ./DeepSortTest\n",
                 "sudo docker run --runtime=nvidia -it nvidia/cuda:11.8.0-base-ubuntu22.04 ./DeepSortTest\n"):
        assert first(asks + error).evidence.get("context_rule") != "nvidia-runtime-without-visible-devices"


def test_nvdec_without_the_drivers_video_library():
    line = "[h264_cuvid @ 0x1ec8780] Cannot load libnvcuvid.so.1\n"
    f = first(line)
    assert f.code == "libcuda-missing" and "libnvcuvid.so.1" in f.title
    f = first(line + "Further, libnvcuvid.so.1 is nowhere to be found on the container's filesystem.\n")
    assert f.code == "container-no-gpu-access" and "video" in f.detail


def test_other_front_ends_say_which_cuda_they_lack():
    cases = {"Cuda 11.0 detected but torch only supports: cpu, 10.1, 10.2, 9.2\n": "cuda-version-mismatch",
             "Error in lantern_install_libs(version, type, path, install_config) :\n  The 11.4 installation type is "
             "currently unsupported.\n": "cuda-version-mismatch",
             "Error: CUDA driver 8.0.0 is not compatible with any supported CUDA toolkit (11.4.4, 11.5.2)\n": "driver-too-old",
             "WARNING: could not find CUDNN, its functionality will be unavailable\n": "cudnn-missing",
             "OSError: MindSpore version 1.0.0 and cuda version 10.0 does not match,\n": "cuda-version-mismatch",
             "RuntimeError: assertion `CUDNN_VERSION == cudnnGetVersion()' failed at handle.cpp:58\nextra message: cudnn "
             "version mismatch: compiled with 8101; detected 8204 at runtime\n": "cudnn-version-mismatch"}
    assert_first_codes(cases)


def test_jax_backends_other_than_cuda_and_deepstreams_first_engine_build_are_harmless():
    for log in ("xla_bridge.py:841] Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: libtpu.so: "
                "cannot open shared object file: No such file or directory\n",
                "Is the below output an issue during execution startup, ie 'unable to initialize backend tpu_driver'?\n"
                "I0820 xla_bridge.py:353] Unable to initialize backend 'tpu_driver': NOT_FOUND: Unable to find driver "
                "in registry given worker: \n",
                "ERROR: Deserialize engine failed because file path: /opt/ds/model_b1_gpu0_fp32.engine open error\n"):
        assert not [f for f in explain_text(log).findings if f.severity != Severity.INFO], log
    # the CUDA backend failing is not harmless
    assert codes("Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices.\n")


def test_builds_platforms_and_damaged_files():
    cases = {"cv2.error: OpenCV(4.12.0-dev) private.cuda.hpp:112: error: (-213:The function/feature is not implemented) "
             "The called functionality is disabled for current build or platform in function 'throw_no_cuda'\n": "cpu-only-build",
             'InvalidSpec: The package "nvidia/linux-64::cuda-compiler==12.5.0=0" is not available for the specified '
             "platform\n": "no-matching-build",
             "ImportError: Python version mismatch: module was compiled for Python 3.6, but the interpreter version is "
             "incompatible: 3.7.5 (default, Feb 23 2021, 13:22:40)\n": "python-unsupported",
             'crashes and produces error: "The program cant start because cublas_64_70.dll" and "...curand64_70.dll is '
             'missing from your computer".\n': "dll-load-failed",
             "import cntk fails: /usr/local/cuda/lib64/libcudnn.so.6: file too short\n": "cudnn-missing",
             "_catboost.CatboostError: json_helper.h:194: Error: change of option metrics is unimplemented for task "
             "type GPU and was not default in previous run\n": "not-environment"}
    assert_first_codes(cases)


def test_dali_on_native_windows_and_only_there():
    placeholder = ("The installation of nvidia-dali-cuda120 for version 1.44.0 failed.\n"
                   "This is a special placeholder package which downloads a real wheel package.\n")
    f = first(placeholder + "Python Version: CPython 3.11.9 Operating System: Windows 10 CPU Architecture: AMD64\n")
    assert f.code == "platform-unsupported" and "nvidia-dali-cuda120" in f.title
    linux = explain_text(placeholder + "Operating System: Linux CPU Architecture: x86_64\n").findings
    assert not [f for f in linux if f.evidence.get("context_rule") == "dali-on-native-windows"]


def test_torch_wheel_libraries_resolving_another_copy_are_two_copies():
    wheel = ("OSError: /opt/conda/lib/python3.7/site-packages/torch/lib/../../nvidia/cublas/lib/libcublas.so.11: symbol "
             "cublasLtGetStatusString version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time "
             "reference\n")
    f = first(wheel)
    assert f.code == "multiple-cuda-installs" and "libcublasLt" in f.title
    bare = ("libcublas.so.11: undefined symbol: cublasLtGetStatusString, version libcublasLt.so.11\n")
    assert first(bare).code == "cuda-version-mismatch"


def test_a_stated_toolkit_in_prose_is_read_against_a_missing_soname():
    missing = ("Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared "
               "object file: No such file or directory\n")
    assert first("I first installed cuda toolkit 12.3 in windows side\n" + missing).code == "cuda-version-mismatch"


def test_linux_only_packages_that_pip_finds_nothing_of_are_the_platform():
    none = ("ERROR: Could not find a version that satisfies the requirement {pkg} (from versions: none)\n"
            "ERROR: No matching distribution found for {pkg}\n")
    for pkg, where in (("fbgemm-gpu==1.3.0", "(hllm) C:\\Windows\\system32>pip install fbgemm-gpu==1.3.0\n"),
                       ("fbgemm-gpu-cpu", "installing on MacOS\n"), ("qiskit-aer-gpu", ""), ("triton", "")):
        assert first(where + none.format(pkg=pkg)).code == "no-matching-build", pkg
    # torch, which has wheels for every platform, still reads as the Python when one is stated
    assert first("Python 3.13.0\n" + none.format(pkg="torch==1.13.1")).code == "python-unsupported"


def test_machines_without_an_nvidia_gpu_named_by_their_owner_or_their_kernel():
    assert first("RuntimeError: Found no NVIDIA driver on your system.\nMy laptop used Intel(R) Irish(R) Xe Graphics\n"
                 ).code == "no-nvidia-gpu"
    assert first("AssertionError: Torch not compiled with CUDA enabled\nMy PC is Intel R lris Xe Graphics ,help me\n"
                 ).code == "no-nvidia-gpu"
    f = first("modprobe: ERROR: could not insert 'nvidia': No such device\n"
              "cudaGetDeviceCount failed no CUDA-capable device is detected\n")
    assert f.code == "no-nvidia-gpu" and f.severity == Severity.ERROR
    # the same CUDA check with an NVIDIA GPU named stays what it says
    assert first("AssertionError: Torch not compiled with CUDA enabled\nMy PC is Intel UHD Graphics 630 plus an NVIDIA "
                 "GeForce RTX 3060\n").code == "cpu-only-build"


def test_docker_gpu_requests_on_a_mac_are_the_platform():
    refused = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    f = first("my macbookpro is M1 chip.\nsudo docker run --gpus all -it melotts\n" + refused)
    assert f.code == "platform-unsupported" and "Mac" in f.title
    assert first("sudo docker run --gpus all -it melotts\n" + refused).code == "container-no-gpu-access"


def test_device_permissions_and_exclusive_gpus():
    f = first("$ nvidia-smi\nFailed to initialize NVML: Insufficient Permissions\n")
    assert f.code == "device-nodes-missing" and any("usermod" in step for step in f.fix)
    # inside a container that was given the GPU, it is still the devices' permissions, not a missing --gpus
    assert first("podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi -L\n"
                 "Failed to initialize NVML: Insufficient Permissions\n").code == "device-nodes-missing"
    both = ('user@host:~> sudo ~/venv/bin/python -c "import torch;print(torch.cuda.is_available())"\nTrue\n'
            'user@host:~> ~/venv/bin/python -c "import torch;print(torch.cuda.is_available())"\nFalse\n')
    assert first(both).code == "device-nodes-missing"
    assert first('python -c "import torch;print(torch.cuda.is_available())"\nFalse\n').code != "device-nodes-missing"
    f = first("F cuda_driver.cc:383] Check failed: CUDA_SUCCESS == dynload::cuCtxSetCurrent(context) (0 vs. 216)\n")
    assert f.code == "gpu-unavailable" and "exclusive" in f.title


def test_a_path_the_program_may_not_write_is_the_program_but_a_device_file_is_not():
    assert first("PermissionError: [Errno 13] Permission denied: '/runtime'\n").code == "not-environment"
    assert first("PermissionError: [Errno 13] Permission denied: '/dev/nvidia0'\n").code == "device-nodes-missing"


def test_companion_and_simulator_libraries():
    f = first("ERROR:root:Could not load the library 'fbgemm_gpu_py.so': /x/fbgemm_gpu/fbgemm_gpu_py.so: undefined "
              "symbol: _ZN3tbb6detail2r117deallocate_memoryEPv\n")
    assert f.code == "conflicting-packages" and "fbgemm_gpu" in f.title
    assert first(">>> import torchrec\nFile fbgemm_gpu_py.so not found\n").code == "conflicting-packages"
    assert first("ImportError: libcustatevec.so.1: cannot open shared object file: No such file or directory\n"
                 ).code == "cuda-library-missing"
    assert first("ImportError: Invalid simulator requested: custatevec_fp32\n").code == "cuda-library-missing"
    f = first("[E llvm_context.cpp:178] Bitcode file (C:\\taichi\\core\\../lib/slim_libdevice.10.bc) not found.\n")
    assert f.code == "libdevice-missing"
    f = first("[E dynamic_loader.cpp:taichi::DynamicLoader::load_function@32] Function cuDeviceGetDefaultMemPool not found\n")
    assert f.code == "driver-too-old" and "cuDeviceGetDefaultMemPool" in f.title


def test_dnn_library_not_found_and_cuda_ipc_on_windows():
    assert first("UNIMPLEMENTED: DNN library is not found.\n").code == "cudnn-version-mismatch"
    f = first("RuntimeError: cuda runtime error (801) : operation not supported at C:\\w\\1\\s\\windows\\pytorch\\torch/"
              "csrc/generic/StorageSharing.cpp:245\n")
    assert f.code == "platform-unsupported" and any("num_workers=0" in step for step in f.fix)
    # error 801 elsewhere is not the DataLoader's IPC
    assert first("CUDA error 801: operation not supported\n").code != "platform-unsupported"


def test_round_j_readings_and_their_neighbours():
    assert_first_codes({
        "nvidia-docker-plugin | 2017/09/18 Error: could not load NVML library\n": "libcuda-missing",
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system.\n": "libcuda-missing",
        "ImportError: /x/warp_rnnt/_C.cpython-37m-x86_64-linux-gnu.so: undefined symbol: "
        "_ZN6caffe28TypeMeta21_typeMetaDataInstanceIN3c107complexIfEEEEPKNS_6detail12TypeMetaDataEv\n": "conflicting-packages",
        "[F] /k2/csrc/device_guard.h:66:static int32_t k2::DeviceGuard::GetDevice() k2 compiled without CUDA support\n":
            "cpu-only-build",
        "AssertionError: PyTorch is built with CUDA version: 11.7.\nThe current running CUDA version is: 10.2.89\n":
            "extension-cuda-mismatch",
        "My cuda version was 10.1\nImportError: libcublas.so.10.0: cannot open shared object file: No such file or "
        "directory\n": "cuda-version-mismatch",
        "I got the error message 'Fail to find the dnn implementation'.\n": "cudnn-version-mismatch",
        "GPU available: True, used: False\n": "not-environment",
        "UserWarning: Failed to import torchrl C++ binaries. Some modules (eg, prioritized replay buffers) may not work "
        "with your installation.\n": "conflicting-packages",
        "RuntimeError: cuda runtime error (2) : out of memory at /x/aten/src/THC/generic/THCStorage.cu:58\n":
            "gpu-memory-full",
    })
    # TensorRT's provider missing while ONNX Runtime retries with CUDA is harmless; the CPU fallback is not read as such
    fallback = ("*************** EP Error ***************\nEP Error onnxruntime_pybind_state.cc:456 onnxruntime::python::"
                "RegisterTensorRTPluginsAsCustomOps Please install TensorRT libraries as mentioned in the GPU requirement\n"
                "Falling back to ['CUDAExecutionProvider', 'CPUExecutionProvider'] and retrying.\n")
    assert not [f for f in explain_text(fallback).findings if f.severity != Severity.INFO]
    assert any(n.id == "benign-onnxruntime-tensorrt-falls-back-to-cuda" for n in explain_text(fallback).notes)
    # cuDNN failing to start for want of memory is the memory, not the cuDNN version
    oom = ("E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n"
           "tensorflow.python.framework.errors_impl.UnknownError: Fail to find the dnn implementation.\n")
    assert first(oom).code == "gpu-memory-preallocated"
