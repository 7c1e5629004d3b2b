"""Readings added in stop 27, from the blind sets independent88-93 (headless rendering, HPC schedulers, model
servers, tabular ML, prebuilt images and CI, threads in Korean, Japanese and Russian): the driver's graphics
libraries (OptiX, EGL, Vulkan) on a host and in a container, CUDA-OpenGL interop under WSL 2, CUDA used while an
image is built, tensorflow beside tensorflow-gpu, servers compiled for one GPU architecture, RAPIDS' minimum GPU,
libnvJitLink shadowed by a stated system CUDA or mixed in a conda environment, and program mistakes that name no
GPU (a pybind call, a Triton model configuration, an unreachable gRPC server). Each reading is checked next to the
log that must not get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from gpudoctor.model import Severity
from tests.explain.readings import first


def codes(text: str):
    return [f.code for f in explain_text(text).findings]


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
    # a stated CUDA as new as the symbol, or none, leaves the reading as it was
    assert first("- **CUDA version**: 12.6\n" + NVJITLINK.format(path=WHEEL)).code == "cuda-version-mismatch"
    assert first(NVJITLINK.format(path=WHEEL)).code == "cuda-version-mismatch"


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
    assert explain_text("$ nvidia-docker run --rm img\n").facts.get("docker_run_gpus") == "nvidia-docker run"
