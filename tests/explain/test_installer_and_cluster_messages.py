"""Readings added in stop 23 from the blind sets independent45-47 (clusters and notebooks, the newest era,
installers and build pipelines): Poetry's and uv's no-wheel messages, conda's __cuda constraint that states the
driver's CUDA, a CUDA ops setup.py that finds no GPU (inside `docker build` a container without GPU access),
pyxis/enroot containers on Slurm, and a CPU torch asked for CUDA on a Mac. Each reading is checked next to the log
that must not get it."""

from __future__ import annotations

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
