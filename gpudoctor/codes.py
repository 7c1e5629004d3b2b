"""The catalogue of finding codes: one entry per code, with its documentation.

Codes are the shared vocabulary of `check`, `explain` and `report` (DESIGN.md). They are stable:
add new ones, never rename one. `gpudoctor codes CODE` prints an entry; docs/findings.md is
generated from this file (tests/test_codes.py keeps the two in step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional

from .model import Finding, Layer, Severity


@dataclass(frozen=True)
class CodeInfo:
    code: str
    layer: Layer
    severity: Severity  # the usual severity; a rule may lower it where the cost is smaller
    title: str
    meaning: str  # what it means, and why it matters
    detection: str  # how gpudoctor detects it
    remedy: str  # how it is fixed, in general terms (findings carry the tailored commands)


def _c(code: str, layer: Layer, severity: Severity, title: str, meaning: str, detection: str, remedy: str) -> CodeInfo:
    return CodeInfo(code, layer, severity, title, meaning, detection, remedy)


E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO
L = Layer

CATALOG: Dict[str, CodeInfo] = {
    c.code: c
    for c in [
        # -- hardware ------------------------------------------------------------------------
        _c("no-nvidia-gpu", L.HARDWARE, I, "No NVIDIA GPU on this machine",
           "No NVIDIA display or 3D controller is on the PCI bus, and no driver reports one. "
           "Frameworks will run on the CPU. This is a fact, not a fault.",
           "Reads /sys/bus/pci/devices/*/vendor (0x10de) and class (0x03xxxx); on WSL2 the GPU "
           "is not on the PCI bus, so /dev/dxg and the WSL driver libraries are checked instead.",
           "Nothing to fix on a CPU machine. In a VM or cloud instance, make sure a GPU is "
           "attached (PCI passthrough, an instance type with a GPU)."),
        # -- kernel driver -------------------------------------------------------------------
        _c("driver-not-loaded", L.KERNEL_DRIVER, E, "NVIDIA GPU present but the kernel driver is not loaded",
           "The GPU is on the PCI bus, but the nvidia kernel module is not loaded, so no program "
           "can use it. Common after a kernel update (module not built for the new kernel), with "
           "Secure Boot refusing an unsigned module, or when nouveau holds the card.",
           "An NVIDIA device in /sys/bus/pci while /proc/driver/nvidia/version is absent and "
           "/sys/module/nvidia is not there; cuInit returning 100 or NVML 'Driver Not Loaded' confirm it.",
           "Install or rebuild the driver for the running kernel (DKMS), check `dmesg | grep -i nvidia`, "
           "blacklist nouveau, sign the module or disable Secure Boot, then reboot."),
        _c("device-nodes-missing", L.KERNEL_DRIVER, E, "/dev/nvidia* device nodes are missing or not accessible",
           "The driver is loaded but the device files programs open (/dev/nvidiactl, /dev/nvidiaN) "
           "are missing or this user cannot open them. Typical in a container started without GPU "
           "access, or when the nodes were never created.",
           "Lists /dev/nvidia* under GPUDOCTOR_SYSROOT and tries to open each one read-write.",
           "In a container: run with `--gpus all` (Docker) and the NVIDIA Container Toolkit. On a host: "
           "run `nvidia-modprobe` or `nvidia-smi` once as root, or add the user to the group that owns the nodes."),
        _c("uvm-not-loaded", L.KERNEL_DRIVER, E, "nvidia_uvm is not loaded (/dev/nvidia-uvm missing)",
           "CUDA needs the nvidia_uvm module and /dev/nvidia-uvm. Without it, nvidia-smi works but "
           "every CUDA program fails at initialisation (often error 999 or 'unknown error'). The same module left "
           "in a bad state by suspend/resume fails the same way until it is reloaded.",
           "nvidia is loaded but /sys/module/nvidia_uvm or /dev/nvidia-uvm is absent; in a log, CUDA's 'unknown "
           "error' (999) at initialisation or modprobe failing on nvidia-uvm.",
           "Run `sudo modprobe nvidia-uvm` (or `sudo nvidia-modprobe -u -c=0`) on the host, or after a suspend "
           "`sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm`; in a container, fix it on the host and restart "
           "the container."),
        _c("wsl-driver-misconfigured", L.KERNEL_DRIVER, E, "WSL2 GPU support is not set up correctly",
           "Under WSL2 the Windows driver provides CUDA through /dev/dxg and /usr/lib/wsl/lib. A Linux "
           "driver installed inside WSL, or a missing /usr/lib/wsl/lib, breaks it.",
           "WSL2 detected (kernel release or /proc/version mentions microsoft); /dev/dxg or "
           "/usr/lib/wsl/lib/libcuda.so is missing, or libcuda.so.1 resolves outside /usr/lib/wsl/lib.",
           "Install the NVIDIA driver on Windows only; never install a Linux display driver inside WSL. "
           "Remove stray libcuda copies and run `wsl --update`."),
        _c("container-no-gpu-access", L.KERNEL_DRIVER, E, "This container was started without GPU access",
           "The host's NVIDIA kernel module shows through /proc and /sys, but the container has no "
           "/dev/nvidia* device nodes and no driver libraries: it was started without `--gpus` (Docker), "
           "without a CDI device (Podman) or the NVIDIA runtime, in a Kubernetes pod without an "
           "`nvidia.com/gpu` limit, or with NVIDIA_VISIBLE_DEVICES=void/none. Missing device nodes and a "
           "missing libcuda are symptoms of this one cause.",
           "Container markers (/.dockerenv, /run/.containerenv, the cgroup of PID 1, Kubernetes variables) "
           "together with /proc/driver/nvidia present and /dev/nvidia* or libcuda.so.1 absent; "
           "NVIDIA_VISIBLE_DEVICES; in a log, the container runtime's own error.",
           "Start the container with GPU access: `docker run --gpus all ...` (with the NVIDIA Container "
           "Toolkit on the host), `podman run --device nvidia.com/gpu=all ...` (CDI), a `deploy.resources."
           "reservations.devices` entry with `capabilities: [gpu]` in compose, or `resources.limits: "
           "nvidia.com/gpu: 1` in a Kubernetes pod (with NVIDIA's device plugin)."),
        # -- user-space driver ---------------------------------------------------------------
        _c("libcuda-missing", L.USERSPACE_DRIVER, E, "libcuda.so.1 (the CUDA driver library) cannot be loaded",
           "libcuda.so.1 is installed by the NVIDIA driver, not by CUDA toolkits or pip wheels. "
           "Without it nothing can run on the GPU.",
           "dlopen('libcuda.so.1') in a child process; the dlerror text is kept.",
           "Install the NVIDIA driver's user-space libraries (they must match the kernel module's version). "
           "In a container, use the NVIDIA Container Toolkit, which mounts them."),
        _c("nvml-driver-mismatch", L.USERSPACE_DRIVER, E, "Driver/library version mismatch (upgrade without reboot)",
           "The user-space driver libraries were upgraded but the old kernel module is still loaded. "
           "NVML and CUDA refuse to work until they match.",
           "NVML initialisation fails with 'Driver/library version mismatch', or the version in "
           "/proc/driver/nvidia/version differs from the one libcuda/NVML report.",
           "Reboot. Or, with no GPU process running, reload the modules: "
           "`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia nvidia_uvm`."),
        _c("cuda-init-failed", L.USERSPACE_DRIVER, E, "cuInit failed: the CUDA driver cannot initialise",
           "cuInit is the first call any CUDA program makes. When it fails, every framework fails.",
           "cuInit(0) in a child process; the CUresult number and name are kept.",
           "Depends on the error: see the detail, which names the error and its usual cause."),
        # -- visibility ----------------------------------------------------------------------
        _c("no-visible-gpu", L.VISIBILITY, E, "GPUs exist but none is visible to CUDA programs",
           "CUDA_VISIBLE_DEVICES hides every GPU (empty, -1, or an invalid first entry).",
           "Parses CUDA_VISIBLE_DEVICES the way the CUDA driver does and maps it to the GPUs NVML sees.",
           "Unset CUDA_VISIBLE_DEVICES, or set it to the GPUs you want (e.g. `export CUDA_VISIBLE_DEVICES=0`)."),
        _c("invalid-visible-devices", L.VISIBILITY, W, "CUDA_VISIBLE_DEVICES has an entry CUDA ignores",
           "CUDA reads CUDA_VISIBLE_DEVICES left to right and stops at the first entry that is not a "
           "valid index or UUID; everything after it is silently dropped, and a duplicate is an error.",
           "Parses the variable with CUDA's rules and compares with the GPUs present.",
           "Set CUDA_VISIBLE_DEVICES to a comma-separated list of valid indices or UUIDs (`nvidia-smi -L`)."),
        _c("invalid-device-ordinal", L.VISIBILITY, E, "A device ordinal that does not exist is requested",
           "A program asked for cuda:N but only fewer devices are visible.",
           "From logs ('invalid device ordinal') or when CUDA_VISIBLE_DEVICES names no existing GPU.",
           "Use an ordinal below the visible device count; remember CUDA_VISIBLE_DEVICES renumbers from 0."),
        _c("misspelled-env-var", L.VISIBILITY, W, "A look-alike of a CUDA environment variable is set",
           "A misspelled variable (CUDA_VISIBLE_DIVICES, cuda_visible_devices, ...) has no effect: "
           "every GPU stays visible although you meant to restrict them.",
           "Compares each environment variable name with the names CUDA reads (case and edit distance).",
           "Unset the misspelled name and set the real one."),
        _c("device-order-differs", L.VISIBILITY, W, "CUDA and nvidia-smi number the GPUs differently",
           "CUDA orders devices fastest first by default, nvidia-smi by PCI bus id. On a machine with "
           "different GPU models, cuda:0 may not be GPU 0 of nvidia-smi.",
           "CUDA_DEVICE_ORDER is not PCI_BUS_ID and the GPUs differ in model.",
           "`export CUDA_DEVICE_ORDER=PCI_BUS_ID` so both agree."),
        _c("gpu-memory-full", L.VISIBILITY, W, "GPU memory is (almost) full",
           "Another process holds most of this GPU's memory; creating a CUDA context there fails with "
           "CUDA_ERROR_OUT_OF_MEMORY. An error when every visible GPU is full.",
           "NVML memory info and compute processes per GPU; each process's user and command line from "
           "/proc/PID (a process of another PID namespace, such as a container, is named by pid only).",
           "Use GPUs with free memory (the fix prints the CUDA_VISIBLE_DEVICES value; "
           "`eval \"$(gpudoctor gpus --pick N)\"` picks the N freest), or stop the processes holding the memory."),
        _c("gpu-unavailable", L.VISIBILITY, E, "The GPU refuses new CUDA programs (busy or unavailable)",
           "CUDA reports every device busy or unavailable: the GPU is in compute mode Exclusive_Process and "
           "another process already has it, in compute mode Prohibited, or (WSL, VMs) not really passed through. "
           "The driver and the GPU work; this program is not allowed on it.",
           "From a log: cudaErrorDevicesUnavailable (46, 'all CUDA-capable devices are busy or unavailable') "
           "and CUDA_ERROR_DEVICE_UNAVAILABLE.",
           "`nvidia-smi -q -d COMPUTE` shows the compute mode; pick a free GPU with CUDA_VISIBLE_DEVICES "
           "(`gpudoctor gpus`), wait for the process that holds it, or ask an administrator for "
           "`nvidia-smi -c DEFAULT`."),
        _c("gpu-memory-preallocated", L.VISIBILITY, W, "A framework's memory preallocation leaves no room",
           "TensorFlow and JAX reserve most of a GPU's memory when they start (JAX 75%). A second framework "
           "or process on the same GPU, or cuDNN/cuBLAS creating their handles, then fails with "
           "CUDNN_STATUS_NOT_INITIALIZED, CUBLAS_STATUS_ALLOC_FAILED or 'Failed to get convolution "
           "algorithm' although nothing else fills the GPU.",
           "Reads TF_FORCE_GPU_ALLOW_GROWTH, XLA_PYTHON_CLIENT_PREALLOCATE, XLA_PYTHON_CLIENT_MEM_FRACTION "
           "and XLA_PYTHON_CLIENT_ALLOCATOR; in a log, start-up allocation failures on a GPU that is not full.",
           "`export TF_FORCE_GPU_ALLOW_GROWTH=true` (TensorFlow), `export XLA_PYTHON_CLIENT_PREALLOCATE=false` "
           "or `XLA_PYTHON_CLIENT_MEM_FRACTION=.5` (JAX), or give each process its own GPU with "
           "CUDA_VISIBLE_DEVICES."),
        # -- CUDA libraries ------------------------------------------------------------------
        _c("cuda-library-missing", L.CUDA_LIBRARIES, E, "A CUDA library a framework needs cannot be found",
           "A framework dlopens CUDA libraries by soname (libcublas.so.12, ...). If none is on the "
           "loader's path, it falls back to the CPU or fails.",
           "Searches the way frameworks do: pip nvidia/*/lib wheels, conda $PREFIX/lib, LD_LIBRARY_PATH, "
           "the ldconfig cache, CUDA_HOME and /usr/local/cuda*; dlopen in a child process for the dlerror.",
           "Install the library for the right CUDA major (pip nvidia-* wheels or the CUDA toolkit) or put "
           "its folder on LD_LIBRARY_PATH."),
        _c("cuda-version-mismatch", L.CUDA_LIBRARIES, E, "The CUDA runtime found is not the one the framework was built for",
           "A framework built for CUDA X.Y dlopens libcudart.so.X.Y (old TensorFlow) or libcudart.so.X; "
           "another version does not satisfy it.",
           "Joins the framework's build facts with the libraries found.",
           "Install the CUDA version the framework needs, or the framework build that matches your CUDA."),
        _c("cudnn-missing", L.CUDA_LIBRARIES, E, "cuDNN is not found",
           "The framework needs libcudnn.so.N and none is on the loader's path.",
           "Library search for libcudnn.so.N for the major the framework needs.",
           "Install cuDNN for that major (pip nvidia-cudnn-cuXX or conda cudnn)."),
        _c("cudnn-version-mismatch", L.CUDA_LIBRARIES, E, "cuDNN version does not match the framework's",
           "The cuDNN found is another major than the framework dlopens, or (TensorFlow) an older minor "
           "than it was compiled with.",
           "Joins cudnnGetVersion with the framework's build facts.",
           "Install the cuDNN version the framework was built with."),
        _c("dll-load-failed", L.CUDA_LIBRARIES, E, "Windows cannot load a DLL a package needs",
           "On native Windows an extension module (TensorFlow's _pywrap_tensorflow_internal, torch's "
           "c10.dll, ...) could not be loaded because a DLL it depends on was not found: a CUDA or cuDNN "
           "DLL (cudart64_110.dll, cudnn64_8.dll), the Microsoft Visual C++ runtime, or a folder that "
           "Python >= 3.8 no longer searches (PATH is not used for DLL dependencies of extension modules; "
           "os.add_dll_directory is). Windows-Store Python adds its own path virtualisation.",
           "The Windows loader's messages in a log ('DLL load failed', 'Could not load dynamic library "
           "'...dll''); on Windows, the interpreter and the DLL folders it searches.",
           "Install the CUDA/cuDNN versions the build needs (or a build that ships its own DLLs, such as "
           "PyTorch's CUDA wheels), install the Visual C++ Redistributable, add the DLL folder with "
           "`os.add_dll_directory(...)` before the import, and prefer python.org or conda Python over the "
           "Microsoft Store one."),
        _c("multiple-cuda-installs", L.CUDA_LIBRARIES, W, "Several copies of a CUDA library shadow each other",
           "The same soname is found in several places; which one a program gets depends on "
           "LD_LIBRARY_PATH, RPATH and load order, so two programs can load different versions.",
           "Every copy found by the library search, with its real path, version and how it was found.",
           "Remove the copies you do not need, or take the stale folder off LD_LIBRARY_PATH."),
        _c("ptxas-missing", L.CUDA_LIBRARIES, W, "ptxas is not found",
           "TensorFlow's XLA and JAX compile PTX with ptxas; without it they fall back or fail.",
           "Looks for ptxas on PATH, in CUDA_HOME and in the nvidia-cuda-nvcc wheel.",
           "Install the nvidia-cuda-nvcc wheel or the CUDA toolkit and put its bin folder on PATH."),
        _c("libdevice-missing", L.CUDA_LIBRARIES, W, "libdevice is not found",
           "XLA needs libdevice.10.bc to compile kernels.",
           "Looks for nvvm/libdevice/libdevice.10.bc in the CUDA installations found.",
           "Install the nvidia-cuda-nvcc wheel or set XLA_FLAGS=--xla_gpu_cuda_data_dir=/usr/local/cuda."),
        _c("extension-cuda-mismatch", L.CUDA_LIBRARIES, W, "nvcc / CUDA_HOME is not the CUDA the framework was built with",
           "Building a CUDA extension (torch.utils.cpp_extension, pip packages with CUDA code) uses the "
           "nvcc under CUDA_HOME (or on PATH). PyTorch refuses a different CUDA major and warns on a "
           "different minor; CUDA_HOME unset or pointing at a folder without bin/nvcc fails the build. "
           "Only people who build extensions are affected.",
           "Reads CUDA_HOME/CUDA_PATH, the nvcc on PATH and its `--version`, and compares them with the "
           "CUDA version the installed torch was built with.",
           "Point CUDA_HOME at a toolkit of the same CUDA major.minor as the framework "
           "(`export CUDA_HOME=/usr/local/cuda-X.Y`), or install that toolkit (conda's `cuda-nvcc` / "
           "`cuda-toolkit` with a matching `cuda-version`)."),
        _c("host-compiler-unsupported", L.CUDA_LIBRARIES, W, "The host C++ compiler is newer than nvcc accepts",
           "nvcc supports a fixed range of host compilers per CUDA release and stops with 'unsupported "
           "GNU version! gcc versions later than N are not supported!' for a newer gcc.",
           "Reads the default host compiler's version and compares it with the nvcc's documented limit.",
           "Install an older gcc beside the system one and point nvcc at it (`export CC=gcc-N CXX=g++-N`, "
           "or `NVCC_CCBIN`), or use a newer CUDA toolkit."),
        _c("ninja-missing", L.CUDA_LIBRARIES, W, "ninja is not installed (needed to build PyTorch extensions)",
           "torch.utils.cpp_extension builds just-in-time extensions with ninja; without it they fail with "
           "'Ninja is required to load C++ extensions'.",
           "Looks for `ninja` on PATH and the ninja package in the environment.",
           "`pip install ninja` (or `conda install ninja`) in the environment that builds the extension."),
        _c("ptxas-too-old", L.CUDA_LIBRARIES, W, "ptxas is older than the CUDA the build needs",
           "XLA (JAX, TensorFlow) compiles kernels with the ptxas it finds; one older than the CUDA the "
           "build was made for fails or falls back to slower code ('ptxas version is older than ...').",
           "Runs the ptxas XLA would find (the nvidia-cuda-nvcc wheel, CUDA_HOME, PATH) with --version "
           "and compares it with the build's CUDA version.",
           "Install the matching `nvidia-cuda-nvcc-cuXX` wheel (JAX's `jax[cuda12]` extra brings it) or put a "
           "newer toolkit's bin first on PATH."),
        _c("nvlink-missing", L.CUDA_LIBRARIES, W, "nvlink is not found",
           "XLA links kernels for the GPU with nvlink; without it, it falls back to the driver, which can "
           "fail or be slow.",
           "Looks for nvlink next to the ptxas XLA uses.",
           "Install the CUDA toolkit's nvcc component (the `nvidia-cuda-nvcc-cuXX` wheel or conda's `cuda-nvcc`)."),
        # -- compatibility -------------------------------------------------------------------
        _c("driver-too-old", L.COMPATIBILITY, E, "The NVIDIA driver is too old for this CUDA runtime",
           "Each CUDA runtime needs a minimum driver (with minor-version compatibility, a CUDA 12.x "
           "runtime runs on any 12.x-capable driver, except for PTX JIT). An older driver gives "
           "'CUDA driver version is insufficient for CUDA runtime version' (error 35).",
           "Compares the driver's CUDA version (cuDriverGetVersion / NVML) with the runtimes found "
           "and the compat tables.",
           "Upgrade the driver to at least the version named, or install a framework build for an older CUDA."),
        _c("gpu-arch-unsupported", L.COMPATIBILITY, E, "The framework build has no kernels for this GPU",
           "The GPU's compute capability is not in the build's arch list and no PTX in it can be "
           "JIT-compiled ('no kernel image is available for execution on the device').",
           "Compares the GPU's compute capability with the build's arch list: torch.cuda.get_arch_list() live, "
           "else the fat binaries (.nv_fatbin headers) of its installed CUDA library and of the cuBLAS/cuDNN it "
           "loads, build_info.py, the compat tables (an arch list, or for torch 2.8-2.10 variants with none sourced, the "
           "release's own supported range: a GPU below it has no kernels), or the GPU generation table (a CUDA 12 "
           "build has no Kepler kernels: CUDA 12 toolkits no longer build for them).",
           "Install a build that supports this GPU (named in the fix), or learn that none is known; never a "
           "driver the GPU cannot take (a Kepler GPU's last driver branch is R470)."),
        _c("python-unsupported", L.COMPATIBILITY, E, "This Python version is not supported by the framework release",
           "The framework release publishes no wheels for this Python.",
           "Compares the target interpreter's version with the compat tables.",
           "Use a Python version the release supports, or a release that supports your Python."),
        _c("platform-unsupported", L.COMPATIBILITY, E, "GPU support is not available on this platform",
           "For example TensorFlow >= 2.11 has no GPU support on native Windows, CUDA is not on macOS.",
           "Platform facts joined with the compat tables.",
           "Use WSL2 on Windows, or a supported platform."),
        _c("platform-limited", L.COMPATIBILITY, I, "Some layers cannot be examined on this operating system",
           "gpudoctor reads the hardware, driver, CUDA-library and runtime layers through Linux interfaces (/proc, "
           "/sys, /dev, .so sonames). On native Windows and macOS it says so and reports what it can: installed "
           "frameworks and their builds, the compatibility tables (TensorFlow >= 2.11 has no GPU build on native "
           "Windows), and NVML's GPUs where the driver ships it.",
           "The operating system gpudoctor runs on (platform.system()).",
           "Run gpudoctor where the frameworks run on Linux (WSL 2, a container, a Linux machine) for the full check."),
        _c("no-matching-build", L.COMPATIBILITY, E, "The installer found no build for this Python, OS or CPU",
           "pip's 'Could not find a version that satisfies the requirement ... (from versions: none)' / "
           "'No matching distribution found', or a conda solver conflict: no release of the package has a "
           "build for this Python version, operating system, CPU architecture (aarch64, 32-bit Python) or "
           "driver (`__cuda`).",
           "The installer's messages in a log, joined with the Python, platform and driver the log or the "
           "machine shows and the compat tables' lists of supported Pythons and platforms.",
           "Use a Python and platform the release supports (the finding names them), or a release that "
           "supports yours."),
        _c("recommendation", L.COMPATIBILITY, I, "Newest builds this machine can run",
           "The newest framework builds that the driver, GPU and Python can run.",
           "From the compat tables.",
           "The commands are in the finding."),
        _c("newer-than-tables", L.COMPATIBILITY, I, "Newer than gpudoctor's compatibility tables",
           "An installed framework, driver or CUDA release is newer than the newest release gpudoctor's "
           "compat tables cover, so no compatibility fact is inferred for it.",
           "Compares installed versions with the newest release each table declares it covers.",
           "Upgrade gpudoctor for newer tables; until then, check the framework's own release notes."),
        # -- framework -----------------------------------------------------------------------
        _c("cpu-only-build", L.FRAMEWORK, E, "A CPU-only framework build is installed on a GPU machine",
           "torch `+cpu`, tensorflow-cpu and similar builds can never use the GPU.",
           "The framework's version.py/build_info.py and distribution metadata.",
           "Install the CUDA build (the command is in the finding)."),
        _c("conflicting-packages", L.FRAMEWORK, E, "Packages that conflict are installed together",
           "tensorflow + tensorflow-gpu, two torch distributions, mixed -cu11/-cu12 nvidia wheels: "
           "the files of one overwrite the other's. Or a companion built for another release: torchvision "
           "for another torch (or CUDA variant), keras for another TensorFlow, jaxlib for another jax, a "
           "flash-attn whose extension was linked against another CUDA runtime than torch's, or built "
           "against another torch (its import fails with 'undefined symbol: _ZN3c10...').",
           "Installed distributions from metadata: their Requires-Dist pins and +cuXXX local versions, and, for "
           "companions' extension modules listed in their RECORD, the libcudart soname they link (DT_NEEDED) and "
           "the torch symbols they need that the installed torch/lib does not export.",
           "Uninstall all of them and install one; for companions, the one install command that aligns them."),
        _c("package-removed", L.FRAMEWORK, E, "A package name that no longer provides builds is asked for",
           "Some names are placeholders that only raise an error: `tensorflow-gpu` was removed (its last "
           "releases refuse to install and say to use `tensorflow`; GPU support is in `tensorflow` itself, "
           "`tensorflow[and-cuda]` from 2.14), and the `pytorch` name on the package index is not PyTorch "
           "(the package is `torch`).",
           "The installer's error in a log, or the package in the environment's metadata.",
           "Install the real package: `tensorflow[and-cuda]` (Linux) or `tensorflow`, and `torch`."),
        _c("framework-import-failed", L.FRAMEWORK, E, "The framework cannot be imported",
           "Importing the framework raised, crashed or hung.",
           "Imports the framework in a child process of the target interpreter with a timeout.",
           "See the traceback in the finding."),
        _c("framework-gpu-not-detected", L.FRAMEWORK, E, "The framework does not see the GPU",
           "The driver layer sees a GPU, but the framework reports none.",
           "Framework device queries in a child process, joined with the driver facts.",
           "Fix the lower-layer cause named in caused_by."),
        # -- runtime test --------------------------------------------------------------------
        _c("gpu-op-failed", L.RUNTIME_TEST, E, "A tiny operation on the GPU failed",
           "Creating a context, copying memory or running a kernel failed.",
           "A vector add through the CUDA driver API (and a tiny op per framework).",
           "See the error in the finding."),
        _c("gpu-op-wrong-result", L.RUNTIME_TEST, E, "The GPU computed a wrong result",
           "A tiny operation ran but its result differs from the CPU's: a faulty GPU, driver or build.",
           "Compares the GPU result with the CPU result within a stated tolerance.",
           "Update the driver; if it persists, check the GPU's health (`nvidia-smi -q -d ECC`)."),
        _c("cudnn-unacceptable", L.RUNTIME_TEST, E, "PyTorch refuses the cuDNN it loaded",
           "torch.backends.cudnn.is_acceptable() is False: the cuDNN loaded is incompatible.",
           "torch.backends.cudnn.is_acceptable on a tiny CUDA tensor.",
           "Install the cuDNN wheel version torch pins."),
        _c("probe-timeout", L.RUNTIME_TEST, E, "A probe did not finish in time",
           "A probe (driver init, a framework import, a GPU op) hung. The report names it.",
           "Each probe runs in a child process with a timeout.",
           "Look for a hung driver (`dmesg`), a GPU in a bad state, or a slow file system; raise --timeout."),
        _c("probe-crashed", L.RUNTIME_TEST, E, "A probe crashed",
           "A probe's child process died from a signal (segfault) or exited without an answer.",
           "Each probe runs in a child process; its exit status and stderr are kept.",
           "See the detail; a crash inside a driver library often means mismatched driver files."),
        # -- logs only -----------------------------------------------------------------------
        _c("not-environment", L.LOGS, I, "The log shows a bug in the program, not in the install",
           "The error (a device-side assert, out of memory during training, a state-dict key mismatch) "
           "comes from the user's code or data, not from the GPU environment.",
           "gpudoctor explain recognises the message.",
           "Debug the program; the finding points at where to look."),
    ]
}


def info(code: str) -> CodeInfo:
    return CATALOG[code]


def make_finding(
    code: str,
    detail: str,
    *,
    evidence: Optional[Dict[str, Any]] = None,
    fix: Optional[Iterable[str]] = None,
    caused_by: Optional[str] = None,
    title: Optional[str] = None,
    severity: Optional[Severity] = None,
) -> Finding:
    """Build a finding whose code, layer and default title come from the catalogue."""
    entry = CATALOG[code]  # a KeyError here is a programming error: codes must be catalogued
    return Finding(
        code=code,
        severity=severity or entry.severity,
        layer=entry.layer,
        title=title or entry.title,
        detail=detail,
        evidence=dict(evidence or {}),
        fix=list(fix or []),
        caused_by=caused_by,
    )


def render_markdown(entries: Optional[List[CodeInfo]] = None) -> str:
    """docs/findings.md: every code in ruff's fixed shape."""
    lines = ["# Finding codes", "",
             "Generated from `gpudoctor/codes.py` (`gpudoctor codes --markdown`). Codes are stable.", ""]
    for layer in Layer:
        group = [e for e in (entries or CATALOG.values()) if e.layer == layer]
        if not group:
            continue
        lines += [f"## {layer.label}", ""]
        for e in group:
            lines += [f"### `{e.code}` ({e.severity.value})", "", f"**{e.title}**", "",
                      f"- What it means: {e.meaning}", f"- How it is detected: {e.detection}",
                      f"- How to fix: {e.remedy}", ""]
    return "\n".join(lines)
