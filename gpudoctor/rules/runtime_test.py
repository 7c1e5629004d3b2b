"""Runtime-test rules for the framework-free driver-API test, and for probes that hung or crashed."""

from __future__ import annotations

from typing import Iterable

from ..codes import make_finding
from ..facts import Facts
from ..model import Finding
from .base import Prior
from .frameworks import FRAMEWORK_PROBE_PREFIX

CUDA_ERROR_OUT_OF_MEMORY = 2

PROBE_WHAT = {
    "cuda-driver": "the CUDA driver probe (libcuda: cuInit and device queries)",
    "nvml": "the NVML probe (libnvidia-ml: driver version, GPUs, memory)",
    "runtime-test": "the GPU test (a vector add through the CUDA driver API)",
    "libraries": "the CUDA libraries probe (dlopen of libcudart, libcublas, libcudnn, ...)",
    "interpreter": "the target Python interpreter",
}


def gpu_op(facts: Facts, prior: Prior) -> Iterable[Finding]:
    for device in facts.runtime_test.devices:
        if device.ok:
            continue
        where = f"cuda:{device.ordinal}" + (f" ({device.pci_bus_id})" if device.pci_bus_id else "")
        if device.error_code is None and device.max_abs_error:
            yield make_finding("gpu-op-wrong-result",
                               f"A vector add of {device.elements} floats on {where} differs from the CPU result "
                               f"by up to {device.max_abs_error:g} (expected exactly 0: the inputs and sums are "
                               "exact in float32).",
                               evidence={"device": device.ordinal, "max_abs_error": device.max_abs_error},
                               fix=["Update the NVIDIA driver; if it persists, check the GPU's health: "
                                    "`nvidia-smi -q -d ECC,PAGE_RETIREMENT` and `sudo dmesg | grep -i xid`."])
            continue
        if device.error_code is None:
            continue  # crashed mid-test: the probe status says so (probe-crashed)
        memory = device.error_code == CUDA_ERROR_OUT_OF_MEMORY
        full = prior.get("gpu-memory-full") if memory else None
        root = full.code if full else None
        yield make_finding("gpu-op-failed",
                           f"The driver-API test failed on {where} at step '{device.step}': {device.error_name} "
                           f"({device.error_code}){': ' + device.error_string if device.error_string else ''}.",
                           evidence={"device": device.ordinal, "step": device.step, "error": device.error_name,
                                     "code": device.error_code},
                           caused_by=root,
                           # A symptom of a full GPU costs what its cause costs (a warning when other GPUs are free).
                           severity=full.severity if full else None,
                           fix=(["This GPU's memory is taken: see gpu-memory-full for GPUs with free memory."] if memory
                                else ["Check `sudo dmesg | grep -i -E 'nvrm|xid'` for driver errors on this GPU; "
                                      "update the driver, and reboot if the GPU fell into a bad state."]))


def probes_that_failed(facts: Facts, prior: Prior) -> Iterable[Finding]:
    # Framework probes are judged by the framework rules, which know the import phase they hung in.
    statuses = [s for s in facts.probes if not s.name.startswith(FRAMEWORK_PROBE_PREFIX)]
    timed_out = [s for s in statuses if s.status == "timeout"]
    if timed_out:
        # One hang (cuInit, say) stalls every probe that calls into it: one finding names them all.
        names = [s.name for s in timed_out]
        detail = " ".join(f"{_what(s.name)} did not finish: {s.error}." for s in timed_out)
        yield make_finding("probe-timeout", detail,
                           title=f"Probe{'s' if len(names) > 1 else ''} {', '.join(repr(n) for n in names)} timed out",
                           evidence={"probes": names, "seconds": max(s.duration_s for s in timed_out)},
                           fix=["A hang inside the driver often means a GPU in a bad state: check "
                                "`sudo dmesg | grep -i -E 'nvrm|xid'` and whether `nvidia-smi` hangs too; "
                                "a reboot clears it.",
                                "On a slow or busy machine, allow more time: `gpudoctor check --timeout 120`."])
    for status in statuses:
        if status.status not in ("crashed", "failed"):
            continue
        tail = status.stderr_tail.strip().splitlines()[-3:] if status.stderr_tail else []
        yield make_finding("probe-crashed",
                           f"{_what(status.name)} ended without a full answer: {status.error}."
                           + (f" Last words: {' | '.join(tail)}" if tail else ""),
                           title=f"Probe '{status.name}' crashed",
                           evidence={"probe": status.name, "error": status.error},
                           fix=["A crash inside a driver library often means mismatched driver files: reinstall "
                                "the driver, then reboot. Run `gpudoctor check -v` to see the probe's output."])


def _what(probe: str) -> str:
    what = PROBE_WHAT.get(probe, f"the {probe} probe")
    return what[0].upper() + what[1:]


RULES = [gpu_op, probes_that_failed]
