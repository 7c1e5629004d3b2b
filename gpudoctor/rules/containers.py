"""A container started without GPU access: one root cause, with the fix for the runtime in use.

Inside such a container the host's kernel module shows through /proc and /sys, but the NVIDIA
Container Toolkit put no /dev/nvidia* nodes and no driver libraries in it (they are injected only
when GPUs are requested). The missing nodes, the missing libcuda and cuInit's error are symptoms of
that one cause (DESIGN.md: symptoms that share a cause are one finding).
"""

from __future__ import annotations

from typing import Iterable, List, Optional

from ..codes import make_finding
from ..facts import Facts
from ..model import Finding
from .base import Prior
from .situation import gpu_device_nodes, gpu_on_bus, in_container, kernel_module_loaded

# NVIDIA_VISIBLE_DEVICES values with which the container toolkit mounts no GPU (its documentation:
# "void or empty or unset: the runtime acts like runc"; "none: no GPU, but the driver capabilities").
NO_GPU_VALUES = {"void": "void", "none": "none", "": "empty"}

DOCKER = ("Docker: `docker run --gpus all ...` (one GPU: `--gpus '\"device=0\"'`); the NVIDIA Container Toolkit must be "
          "installed on the host (`nvidia-ctk runtime configure --runtime=docker`, then restart docker).")
COMPOSE = ("Docker Compose: under the service, `deploy: {resources: {reservations: {devices: [{driver: nvidia, "
           "count: all, capabilities: [gpu]}]}}}`.")
PODMAN = ("Podman: `podman run --device nvidia.com/gpu=all ...` (CDI); generate the spec on the host once: "
          "`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`.")
KUBERNETES = ("Kubernetes: give the container `resources: {limits: {nvidia.com/gpu: 1}}` (the NVIDIA device plugin "
              "or GPU Operator must run in the cluster).")


def container_runtime(facts: Facts) -> Optional[str]:
    """docker | podman | kubernetes, from the container's own markers, or None when unknown."""
    evidence = " ".join(facts.system.container_evidence)
    if "kubepods" in evidence or "KUBERNETES_SERVICE_HOST" in evidence:
        return "kubernetes"
    if "/run/.containerenv" in evidence or "libpod" in evidence or "container=podman" in evidence:
        return "podman"
    if "/.dockerenv" in evidence or "docker" in evidence:
        return "docker"
    return None


def runtime_fix(runtime: Optional[str]) -> List[str]:
    if runtime == "kubernetes":
        return [KUBERNETES]
    if runtime == "podman":
        return [PODMAN]
    if runtime == "docker":
        return [DOCKER, COMPOSE]
    return [DOCKER, COMPOSE, PODMAN, KUBERNETES]


def _symptoms(facts: Facts) -> List[str]:
    nodes = {n.path: n for n in facts.driver.kernel.device_nodes}
    out = []
    if not any(n.exists for n in gpu_device_nodes(facts)):
        out.append("no /dev/nvidiaN device node")
    if not (nodes.get("/dev/nvidiactl") and nodes["/dev/nvidiactl"].exists):
        out.append("no /dev/nvidiactl")
    if not facts.driver.libcuda.loaded:
        out.append("no driver library (libcuda.so.1)")
    return out


def container_no_gpu_access(facts: Facts, prior: Prior) -> Iterable[Finding]:
    if not in_container(facts) or facts.system.wsl or not (kernel_module_loaded(facts) or gpu_on_bus(facts)):
        return
    visible = facts.environment.variables.get("NVIDIA_VISIBLE_DEVICES")
    switched_off = NO_GPU_VALUES.get(visible.strip().lower()) if visible is not None else None
    symptoms = _symptoms(facts)
    if not switched_off and len(symptoms) < 2:
        return  # devices and libraries are there (a partial problem is the lower rules' to name)
    runtime = container_runtime(facts)
    where = {"docker": "a Docker container", "podman": "a Podman container",
             "kubernetes": "a Kubernetes pod"}.get(runtime or "", "a container")
    detail = (f"This runs in {where} (" + ", ".join(facts.system.container_evidence[:2]) + "), and the host's NVIDIA "
              f"driver{' ' + facts.driver.kernel.version if facts.driver.kernel.version else ''} shows through, but "
              f"the container has {', '.join(symptoms) or 'no GPU'}: it was started without GPU access.")
    fix = runtime_fix(runtime)
    if switched_off:
        detail += (f" NVIDIA_VISIBLE_DEVICES is {switched_off} (\"{visible}\"), which tells the NVIDIA Container "
                   "Toolkit to mount no GPU.")
        fix = ["Set NVIDIA_VISIBLE_DEVICES=all (or GPU indices/UUIDs) where the container is started, not to "
               "void/none/empty (an image's ENV can set it too)."] + fix
    yield make_finding("container-no-gpu-access", detail, fix=fix, evidence={
        "runtime": runtime, "container_evidence": list(facts.system.container_evidence),
        "nvidia_visible_devices": visible, "symptoms": symptoms,
        "kernel_driver": facts.driver.kernel.version})


RULES = [container_no_gpu_access]
