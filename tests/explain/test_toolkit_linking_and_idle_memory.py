"""Readings added from the blind sets of stop 20: the container toolkit unable to use the host's driver,
nvidia-docker 1's own driver check, PyCUDA's 'invalid device', a missing plain libcuda.so link, an undefined
torch symbol without the extension's path, jaxlib without a GPU backend, a Linux driver library beside WSL's in
the loader cache, a GPU whose memory is held while it computes nothing, and TensorFlow's '(from versions: none)'
on a Python newer than the releases of the log's time. Each reading is checked next to the log that must not
get it."""

from __future__ import annotations

from gpudoctor.explain import explain_text
from gpudoctor.model import Severity
from tests.explain.readings import errors, first

TOOLKIT_DRIVER_ERROR = ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:370: "
                        "starting container process caused: process_linux.go:459: container init caused: Running "
                        "hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: "
                        "initialization error: driver error: failed to process request: unknown.")


def test_the_container_toolkit_unable_to_use_the_driver_is_the_host_driver():
    f = first("$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n" + TOOLKIT_DRIVER_ERROR)
    assert f.code == "cuda-init-failed" and f.severity == Severity.ERROR
    assert "host" in f.detail and any("nvidia-container-cli -k -d /dev/tty info" in step for step in f.fix)


def test_the_same_toolkit_error_in_a_wsl_shell_is_wsls_set_up():
    f = first("root@DESKTOP-5A67SBM:/home/user# docker run --rm --gpus=all nvidia/cuda:11.0-base nvidia-smi\n"
              + TOOLKIT_DRIVER_ERROR)
    assert f.code == "wsl-driver-misconfigured"
    assert "DESKTOP-5A67SBM" in f.detail


def test_the_toolkits_rpc_wording_is_the_same_failure():
    assert first("nvidia-container-cli: initialization error: driver rpc error: failed to process request: "
                 "unknown.").code == "cuda-init-failed"


def test_nvidia_docker_1_names_both_cuda_versions():
    f = first("nvidia-docker | 2016/08/22 12:54:02 Error: unsupported CUDA version: driver 7.5 < image 8.0")
    assert f.code == "driver-too-old" and f.severity == Severity.ERROR
    assert "CUDA 8.0" in f.title and "CUDA 7.5" in f.title


def test_pycudas_invalid_device_is_a_gpu_index_the_machine_lacks():
    f = first("python train_mnist.py --gpu 1\nTraceback (most recent call last):\n"
              "pycuda._driver.LogicError: cuDeviceGet failed: invalid device")
    assert f.code == "invalid-device-ordinal"
    assert any("--gpu 0" in step for step in f.fix)


def test_a_missing_plain_libcuda_link_names_the_file_the_driver_does_have():
    f = first("AssertionError: libcuda.so cannot found!\nPossible files are located at ['/lib64/libcuda.so.1']."
              "Please create a symlink of libcuda.so to any of the file.")
    assert f.code == "libcuda-missing"
    assert "'/lib64/libcuda.so.1'" in f.detail and any("TRITON_LIBCUDA_PATH" in step for step in f.fix)
    assert first("/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status").code == "libcuda-missing"
    # another library the linker lacks is not the driver
    assert "libcuda-missing" not in errors("/usr/bin/ld: cannot find -lcudart_static\ncollect2: error: ld returned 1")


def test_an_undefined_torch_symbol_alone_is_an_extension_built_for_another_torch():
    f = first("When upgrading Pytorch to latest nightly build, I receive:\n"
              "undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSs")
    assert f.code == "conflicting-packages"
    assert "_ZN5torch3jit17parseSchemaOrNameERKSs" in f.title
    with_path = first("ImportError: /venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-"
                      "gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi")
    assert with_path.code == "conflicting-packages" and "flash_attn_2_cuda" in with_path.title
    # a symbol of another library (MKL's profiling hook in libtorch_cpu) is not torch's ABI
    assert "conflicting-packages" not in errors("OSError: /venv/lib/python3.10/site-packages/torch/lib/"
                                                "libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent")


def test_jaxlib_without_a_gpu_backend_is_the_cpu_build():
    f = first("  File \"~/env/lib/python3.7/site-packages/jaxlib/xla_client.py\", line 248, in get_local_backend\n"
              "    raise RuntimeError('Unknown backend {}'.format(name))")
    assert f.code == "cpu-only-build" and "jax[cuda12]" in " ".join(f.fix)
    assert first("RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are "
                 "present. Platforms present are: cpu").code == "cpu-only-build"
    # Keras' backend setting is another thing altogether
    assert "cpu-only-build" not in [f.code for f in explain_text("ValueError: Unknown backend: 'foo'").findings]


LDCONFIG_WSL = ("$ ldconfig -p | grep libnvidia-ml\n"
                "        libnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/wsl/lib/libnvidia-ml.so.1\n")


def test_a_linux_driver_library_beside_wsls_in_the_loader_cache_is_wsls_set_up():
    f = first(LDCONFIG_WSL + "        libnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/libnvidia-ml.so.1\n"
              "$ nvtop\nNo GPU to monitor.\n")
    assert f.code == "wsl-driver-misconfigured" and f.severity == Severity.ERROR
    assert "/usr/lib/libnvidia-ml.so.1" in f.detail
    assert any("dpkg -S /usr/lib/libnvidia-ml.so.1" in step for step in f.fix)


def test_wsls_library_alone_or_a_linux_machines_driver_is_no_finding():
    assert errors(LDCONFIG_WSL) == []
    assert errors("        libcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n") == []


SMI_ROW = "| {fan}   63C    P2    72W / 250W |  {used}MiB / 12207MiB |     {util}%      Default |\n"


def test_a_gpu_almost_full_while_it_computes_nothing_is_memory_held_by_another_process():
    f = first("My program crashed but device 0 memory hasn't been released.\n"
              + SMI_ROW.format(fan="24%", used=11409, util=0) + SMI_ROW.format(fan="22%", used=698, util=0))
    assert f.code == "gpu-memory-full" and f.severity == Severity.WARNING
    assert "11409 of 12207 MiB" in f.detail and "0 % GPU-Util" in f.detail


def test_a_full_gpu_that_computes_or_a_log_with_another_cause_gets_no_idle_memory_reading():
    busy = SMI_ROW.format(fan="80%", used=11409, util=98)
    assert [f.code for f in explain_text(busy).findings if f.code == "gpu-memory-full"] == []
    idle = SMI_ROW.format(fan="24%", used=11409, util=0)
    other = first(idle + "RuntimeError: CUDA error: no kernel image is available for execution on the device")
    assert other.code != "gpu-memory-full"


NOT_FOUND = ("ERROR: Could not find a version that satisfies the requirement tensorflow (from versions: none)\n"
             "ERROR: No matching distribution found for tensorflow\n")


def test_tensorflow_with_none_found_on_a_python_newer_than_the_releases_then_names_the_first_release():
    f = first("os: windows 10\nversion python: 3.12.0\n" + NOT_FOUND)
    assert f.code == "python-unsupported"
    assert "Python 3.12.0" in f.detail and "from 2.16.1 on" in f.detail


def test_tensorflow_with_none_found_on_an_older_python_is_not_read_as_the_python():
    # every release up to 2.15 had wheels for 3.10: something else (a 32-bit Python, the platform) is why
    assert first("Python 3.10.6\n" + NOT_FOUND).code == "no-matching-build"


TORCH_NONE = ("ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
              "ERROR: No matching distribution found for torch\n")


def test_torch_with_none_found_on_a_stated_python_and_linux_x86_64_is_the_python():
    f = first(TORCH_NONE + "Python version: 3.12.0 | packaged by conda-forge | (main, Oct  3 2023, 08:43:22) "
              "[GCC 12.3.0] (64-bit runtime)\nPython platform: Linux-6.2.0-37-generic-x86_64-with-glibc2.37\n")
    assert f.code == "python-unsupported" and "Linux x86-64, 64-bit runtime" in f.detail
    # a stated Python and nothing that points at another platform reads the same
    assert first("Python 3.12.0\n" + TORCH_NONE).code == "python-unsupported"


def test_torch_with_none_found_on_a_32_bit_windows_python_is_not_the_version():
    f = first("Python 3.10.6 (tags/v3.10.6:9c7b4bd, Aug  1 2022, 21:38:17) [MSC v.1932 32 bit (Intel)]\n"
              "ERROR: Could not find a version that satisfies the requirement torch==1.13.1+cu117 (from versions: "
              "none)\n")
    assert f.code == "no-matching-build" and "32 bit" in f.detail


def test_a_library_refusing_the_gpus_architecture_is_the_gpu_generation():
    f = first('ERROR (VoskAPI:AddMatMat():cu-matrix.cc:1329) cublasStatus_t 8 : "CUBLAS_STATUS_ARCH_MISMATCH" '
              "returned from 'cublas_gemm(GetCublasHandle(), ...)'")
    assert f.code == "gpu-arch-unsupported" and "CUBLAS_STATUS_ARCH_MISMATCH" in f.title
    assert first("    raise cudnnExceptions[status]\nlibcudnn.cudnnStatusArchMismatch").code == "gpu-arch-unsupported"


def test_openmms_device_index_beyond_the_visible_gpus_is_an_ordinal_the_process_lacks():
    f = first("simtk.openmm.OpenMMException: Illegal value for DeviceIndex: 6\nCUDA_VISIBLE_DEVICES=0,1,2,3,4,6")
    assert f.code == "invalid-device-ordinal" and "GPU 6" in f.title


CUDA_PYTHON = ("  File \"cuda/_cuda/ccuda.pyx\", line 424, in cuda._cuda.ccuda.cuPythonInit\n"
               "RuntimeError: Failed to dlopen libcuda.so\n")


def test_cuda_pythons_plain_libcuda_failure_is_most_often_wsl():
    f = first(">>> import cudf\nTraceback (most recent call last):\n" + CUDA_PYTHON)
    assert f.code == "wsl-driver-misconfigured"
    assert any("/usr/lib/wsl/lib" in step for step in f.fix)


def test_the_same_failure_in_a_container_started_without_gpus_is_not_read_as_wsl():
    codes = [f.code for f in explain_text("$ docker run -it rapidsai/base:24.02 python\n" + CUDA_PYTHON).findings]
    assert "wsl-driver-misconfigured" not in codes and codes[0] in ("container-no-gpu-access", "libcuda-missing")


def test_a_missing_cuda_soname_beside_another_stated_cuda_is_a_version_mismatch():
    log = ("- TensorFlow version: 2.1.0rc0\n- CUDA/cuDNN version: 10.2\n"
           "2019-12-02 15:23:46.869198: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not "
           "load dynamic library 'libcudart.so.10.1'; dlerror: libcudart.so.10.1: cannot open shared object file: "
           "No such file or directory\n")
    f = first(log)
    assert f.code == "cuda-version-mismatch" and "CUDA 10.1" in f.title and "10.2" in f.title
    # the stated CUDA is the one it needs: the libraries are only off the path
    assert first(log.replace("version: 10.2", "version: 10.1")).code == "cuda-library-missing"


def test_cuda_visible_devices_set_to_a_word_hides_every_gpu():
    f = first("RuntimeError: No CUDA GPUs are available\nservices:\n  app:\n    environment:\n"
              "      CUDA_VISIBLE_DEVICES: all\n      NVIDIA_VISIBLE_DEVICES: all\n")
    assert f.code == "invalid-visible-devices" and f.severity == Severity.ERROR and "'all'" in f.title
    assert any("NVIDIA_VISIBLE_DEVICES" in step for step in f.fix)
    # NVIDIA_VISIBLE_DEVICES=all alone is the toolkit's own setting
    assert "invalid-visible-devices" not in errors("      NVIDIA_VISIBLE_DEVICES: all\nRuntimeError: No CUDA GPUs are "
                                                   "available")


def test_a_ngc_container_older_than_the_gpu_is_the_architecture():
    f = first("WARNING: Detected NVIDIA NVIDIA GeForce RTX 3090 GPU, which is not yet supported in this version of the "
              "container\nERROR: No supported GPU(s) detected to run this container")
    assert f.code == "gpu-arch-unsupported" and "RTX 3090" in f.title


def test_the_toolkits_cuda_unknown_error_is_the_host_driver_not_nvidia_uvm():
    f = first("I0214 23:59:15.055857 3558 nvc.c:182] loading kernel module nvidia_uvm\n"
              "nvidia-container-cli: initialization error: cuda error: unknown error")
    assert f.code == "cuda-init-failed"


def test_ninjas_console_script_without_its_module_is_ninja_missing():
    assert first('  File "D:\\env\\Scripts\\ninja.exe\\__main__.py", line 4, in <module>\n'
                 "ModuleNotFoundError: No module named 'ninja'").code == "ninja-missing"


def test_gpu_access_blocked_inside_a_gpu_container_under_wsl_is_the_runtimes_cgroup_setting():
    f = first("sudo docker run --rm --runtime=nvidia --gpus all ubuntu nvidia-smi\n"
              "Failed to initialize NVML: GPU access blocked by the operating system")
    assert f.code == "container-no-gpu-access" and any("no-cgroups = false" in step for step in f.fix)
    # in the distribution itself it stays WSL's set-up
    assert first("$ nvidia-smi\nFailed to initialize NVML: GPU access blocked by the operating system").code == \
        "wsl-driver-misconfigured"


def test_an_old_docker_compose_rejecting_the_gpu_reservation_is_the_containers_gpu_access():
    f = first("The Compose file './docker-compose.yaml' is invalid because:\nservices.sd.deploy.resources.reservations "
              "value Additional properties are not allowed ('devices' was unexpected)")
    assert f.code == "container-no-gpu-access" and "1.28.0" in " ".join(f.fix)


TF_OOM = ("ResourceExhaustedError (see above for traceback): OOM when allocating tensor of shape [1024] and type float\n"
          "\t [[Node: {node} = Const[dtype=DT_FLOAT, _device=\"/job:localhost/replica:0/task:0/device:GPU:0\"]()]]\n")


def test_tensorflow_out_of_memory_while_initialising_variables_is_a_full_gpu():
    f = first(TF_OOM.format(node="flownet_c/conv6/biases/Adam/Initializer/zeros"))
    assert f.code == "gpu-memory-full" and "Initializer" in f.detail
    # the same error inside a training step is the workload's size
    assert first(TF_OOM.format(node="gradients/conv6/Conv2D_grad/Conv2DBackpropInput")).code == "not-environment"


def test_a_conv_input_on_another_device_than_its_weights_is_the_program():
    assert first("RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the "
                 "same").code == "not-environment"


def test_ollama_skipping_a_gpu_its_build_has_no_architecture_for():
    f = first('msg="skipping CUDA device — compute capability not in compiled architectures" device="NVIDIA RTX A6000" '
              'cc=860 archs="[750 890 1000 1200]"')
    assert f.code == "gpu-arch-unsupported" and "NVIDIA RTX A6000" in f.detail and "750 890 1000 1200" in f.detail


def test_a_toolkit_newer_than_the_gpus_last_cuda_is_the_gpu_generation():
    f = first("┌ Error: Your Tesla V100-PCIE-32GB GPU (compute capability 7.0) is not supported on CUDA 13+.\n"
              "ERROR: CUDA error: unknown error (code 999, ERROR_UNKNOWN)\n")
    assert f.code == "gpu-arch-unsupported" and "compute capability 7.0" in f.title
    g = first("ERROR: Failed to compile PTX code (ptxas exited with code 255)\n"
              "ptxas fatal   : Value 'sm_70' is not defined for option 'gpu-name'\n")
    assert g.code == "gpu-arch-unsupported" and "sm_70" in g.title
    # a GPU newer than the toolkit is the toolkit's age, not the GPU's
    assert first("ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'").code != "gpu-arch-unsupported"


def test_a_cudnn_function_missing_at_import_is_an_older_cudnn_loaded():
    f = first("ImportError: /lib/python3.6/site-packages/torch/_C.cpython-36m-x86_64-linux-gnu.so: undefined symbol: "
              "cudnnSetConvolutionGroupCount")
    assert f.code == "cudnn-version-mismatch" and "cudnnSetConvolutionGroupCount" in f.title


def test_a_line_that_says_it_is_no_error_is_not_the_failure_the_last_resort_reads():
    log = ("I tensorflow/core/common_runtime/executor.cc:1197] [/device:CPU:0] (DEBUG INFO) Executor start aborting "
           "(this does not indicate an error and you can ignore this message): INVALID_ARGUMENT: You must feed a value "
           "for placeholder tensor\nI tensorflow/compiler/xla/service/service.cc:177]   StreamExecutor device (0): "
           "Tesla T4, Compute Capability 7.5\n")
    assert [f for f in explain_text(log).findings if f.severity in (Severity.ERROR, Severity.WARNING)] == []


def test_autocast_disabling_cuda_inside_a_docker_image_is_the_containers_gpu_access():
    f = first("I would like to have CUDA installed with the docker images.\n/usr/local/lib/python3.10/site-packages/"
              "torch/amp/autocast_mode.py:250: UserWarning: User provided device_type of 'cuda', but CUDA is not "
              "available. Disabling\n")
    assert f.code == "container-no-gpu-access"


def test_a_conda_companion_built_only_for_older_pytorch_is_a_conflict():
    f = first("UnsatisfiableError: The following specifications were found to be incompatible with a past explicit "
              "spec that is not an explicit spec in this operation (pytorch-cuda):\n\n"
              "  - pyg -> pytorch[version='1.10.*|1.11.*|1.12.*|1.13.*|2.0.*|2.1.*|2.2.*|1.9.*|1.8.*']\n")
    assert f.code == "conflicting-packages" and "pyg" in f.title and "2.2.*" in f.detail


def test_docker_desktops_gpu_sample_failing_in_the_toolkit_is_wsl():
    f = first("docker run --rm -it --gpus=all <package-index>/nvidia/k8s/cuda-sample:nbody nbody -gpu -benchmark\n"
              + TOOLKIT_DRIVER_ERROR)
    assert f.code == "wsl-driver-misconfigured" and "Docker Desktop" in f.detail


def test_cuda_error_35_under_wsl_is_the_windows_side():
    f = first("CUDA error at helper_cuda.h:777 code=35(cudaErrorInsufficientDriver) \"cudaGetDeviceCount(&count)\"\n"
              "I'm running the program on Ubuntu 18.04 (on windows with wsl2)\n")
    assert f.code == "wsl-driver-misconfigured" and any("Windows" in step for step in f.fix)
    # the same error on plain Linux stays the driver's age
    assert first("CUDA error at helper_cuda.h:777 code=35(cudaErrorInsufficientDriver) \"cudaGetDeviceCount(&c)\"\n"
                 ).code == "driver-too-old"
