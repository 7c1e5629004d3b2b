"""Visibility layer rules: CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, misspellings, full GPUs."""

from __future__ import annotations

from typing import Iterable, List

from ..codes import make_finding
from ..facts import Facts
from ..facts.driver import GpuProcess, NvmlGpu
from ..gpus.holders import command_of, shorten
from ..model import Finding, Severity
from ..probes.assemble import cuda_enumeration_order
from .base import Prior
from .situation import gpu_label, mib

# A context needs a few hundred MiB; below this much free memory, creating one fails with
# CUDA_ERROR_OUT_OF_MEMORY or leaves nothing for work.
FULL_FREE_BYTES = 512 * 1024 * 1024
FULL_USED_FRACTION = 0.95
HOLDER_COMMAND_WIDTH = 60  # a finding's detail wraps; a whole command line can be kilobytes


def misspelled_env_var(facts: Facts, prior: Prior) -> Iterable[Finding]:
    for m in facts.environment.misspelled:
        real = facts.environment.variables.get(m.meant)
        detail = (f"{m.name}={m.value!r} is set, but nothing reads {m.name}: did you mean {m.meant}? ")
        detail += (f"{m.meant} itself is {real!r}." if real is not None else
                   f"{m.meant} is not set, so {'every GPU stays visible' if m.meant == 'CUDA_VISIBLE_DEVICES' else 'its default applies'}.")
        yield make_finding("misspelled-env-var", detail, evidence={"set": m.name, "meant": m.meant, "value": m.value},
                           fix=[f"unset {m.name}; export {m.meant}={_shell_quote(m.value)}"])


def _shell_quote(value: str) -> str:
    return value if value and all(c.isalnum() or c in ",._-:/" for c in value) else "'" + value.replace("'", "'\\''") + "'"


def visible_devices(facts: Facts, prior: Prior) -> Iterable[Finding]:
    vis = facts.visible_devices
    gpus = facts.gpus
    if vis.cuda_visible_devices is None or not gpus:
        return
    value = vis.cuda_visible_devices
    indices = f"0-{len(gpus) - 1}" if len(gpus) > 1 else "0"
    cause = None
    if vis.stopped_at is not None:
        bad = next((e for e in vis.entries if not e.valid), None)
        reason = bad.reason if bad else "CUDA stops reading here"
        ordinal = bad is not None and bad.kind == "index"
        code = "invalid-device-ordinal" if ordinal else "invalid-visible-devices"
        severity = Severity.ERROR if vis.hides_all else Severity.WARNING
        kept = [e.text for e in vis.entries if e.valid]
        detail = (f"CUDA_VISIBLE_DEVICES={value!r}: entry {vis.stopped_at!r}: {reason}. "
                  + (f"CUDA uses only {','.join(kept)}." if kept else "So CUDA sees no GPU at all.")
                  + f" This machine's GPUs are {indices} (`nvidia-smi -L`).")
        yield make_finding(code, detail, severity=severity, evidence={"CUDA_VISIBLE_DEVICES": value, "gpus": len(gpus)},
                           fix=[f"export CUDA_VISIBLE_DEVICES={','.join(kept) if kept else '0'}  "
                                f"# valid indices here: {indices}, or GPU UUIDs from `nvidia-smi -L`"])
        cause = code
    if vis.hides_all:
        if vis.duplicates:
            why = f"it names the same GPU twice ({vis.duplicates[0]!r}), and CUDA then shows no GPU at all"
        elif value.strip() == "":
            why = "it is set but empty"
        elif value.strip() == "-1" or cause is None:
            why = f"{value!r} selects no GPU"
        else:
            why = "its first entry is invalid"
        yield make_finding("no-visible-gpu",
                           f"{len(gpus)} GPU(s) are installed, but CUDA_VISIBLE_DEVICES hides all of them: {why}.",
                           evidence={"CUDA_VISIBLE_DEVICES": value, "gpus": len(gpus)}, caused_by=cause,
                           fix=["unset CUDA_VISIBLE_DEVICES  # every GPU", "export CUDA_VISIBLE_DEVICES=0  # only the first"])


def device_order_differs(facts: Facts, prior: Prior) -> Iterable[Finding]:
    vis = facts.visible_devices
    models = {g.name for g in facts.gpus}
    if len(facts.gpus) < 2 or len(models) < 2 or vis.cuda_device_order == "PCI_BUS_ID":
        return
    mapping = ", ".join(f"{m.logical}→GPU {m.physical_index}" for m in vis.mapping if m.physical_index is not None)
    detail = ("This machine has different GPU models and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA numbers GPUs "
              "fastest first, nvidia-smi by PCI bus, so cuda:0 may not be nvidia-smi's GPU 0, and index values in "
              "CUDA_VISIBLE_DEVICES select by CUDA's numbering.")
    if mapping and vis.mapping_source == "cuda":
        detail += f" Here CUDA maps {mapping}."
    yield make_finding("device-order-differs", detail,
                       evidence={"models": sorted(m or "?" for m in models), "CUDA_DEVICE_ORDER": vis.cuda_device_order},
                       fix=["export CUDA_DEVICE_ORDER=PCI_BUS_ID  # CUDA and nvidia-smi then agree"])


def _is_full(gpu: NvmlGpu) -> bool:
    if gpu.memory_free is None or not gpu.memory_total:
        return False
    return gpu.memory_free < FULL_FREE_BYTES or (gpu.memory_used or 0) >= FULL_USED_FRACTION * gpu.memory_total


def gpu_memory_full(facts: Facts, prior: Prior) -> Iterable[Finding]:
    gpus = facts.gpus
    visible = _visible_gpus(facts)
    full = [g for g in visible if _is_full(g)]
    if not full:
        return
    free = sorted((g for g in gpus if g.memory_free is not None and not _is_full(g)),
                  key=lambda g: (-(g.memory_free or 0), g.index))
    all_full = len(full) == len(visible)
    holders = "; ".join(_holders(g) for g in full)
    detail = (f"{len(full)} of the {len(visible)} GPU(s) your programs see {'are' if len(full) > 1 else 'is'} "
              f"(almost) full: {holders}. Creating a CUDA context there fails with CUDA_ERROR_OUT_OF_MEMORY.")
    fix: List[str] = []
    if free:
        selector = _selector(facts, free)
        fix.append(f"export CUDA_VISIBLE_DEVICES={selector}  # GPUs with free memory, most free first: "
                   + ", ".join(f"GPU {g.index} {mib(g.memory_free)} free" for g in free))
    pids = sorted({p.pid for g in full for p in g.processes})
    if pids:
        fix.append(f"Or free the memory: `ps -o user,pid,etime,cmd -p {','.join(map(str, pids))}`; stop those "
                   "processes if they are yours (`kill PID`), else ask their owner.")
    else:
        fix.append("The processes holding the memory are not visible here (another container or user): "
                   "`nvidia-smi` on the host lists them.")
    yield make_finding("gpu-memory-full", detail, severity=Severity.ERROR if all_full and not free else Severity.WARNING,
                       evidence={"full": [{"gpu": g.index, "used": g.memory_used, "total": g.memory_total,
                                           "processes": [vars(p) for p in g.processes]} for g in full],
                                 "free_gpus": [g.index for g in free]}, fix=fix)


def _visible_gpus(facts: Facts) -> List[NvmlGpu]:
    vis = facts.visible_devices
    if vis.cuda_visible_devices is None or not vis.mapping:
        return [] if vis.hides_all else list(facts.gpus)
    chosen = {m.physical_index for m in vis.mapping}
    return [g for g in facts.gpus if g.index in chosen]


def _holders(gpu: NvmlGpu) -> str:
    text = f"{gpu_label(gpu)} {mib(gpu.memory_used)} of {mib(gpu.memory_total)} used"
    if gpu.processes:
        text += " by " + ", ".join(_holder(p) for p in gpu.processes)
    return text


def _holder(process: GpuProcess) -> str:
    """pid 4242 (alice: python train.py) 11000 MiB; a pid from another PID namespace says so."""
    if process.visible is False:  # another PID namespace: NVML's name is all there is
        what = "not visible here" + (f": {process.name}" if process.name else "")
    else:
        what = (f"{process.user}: " if process.user else "") + shorten(command_of(process), HOLDER_COMMAND_WIDTH)
    text = f"pid {process.pid} ({what})"
    return text + (f" {mib(process.used_memory)}" if process.used_memory else "")


def _selector(facts: Facts, chosen: List[NvmlGpu]) -> str:
    """Index values only where CUDA's numbering is known to be nvidia-smi's; UUIDs are safe always."""
    order = cuda_enumeration_order(facts.gpus, facts.visible_devices.cuda_device_order)
    if order is not None:
        position = {g.index: n for n, g in enumerate(order)}
        return ",".join(str(position[g.index]) for g in chosen)
    if all(g.uuid for g in chosen):
        return ",".join(g.uuid or "" for g in chosen)
    return ",".join(str(g.index) for g in chosen) + " CUDA_DEVICE_ORDER=PCI_BUS_ID"


RULES = [misspelled_env_var, visible_devices, device_order_differs, gpu_memory_full]
