"""Ask NVML (libnvidia-ml.so.1) through pynvml. Runs in gpudoctor's own interpreter.

Every NVML call can fail on its own (not supported on this GPU, GPU lost, version mismatch);
each is caught where it is made and kept as text, as nvitop does, never raised.
"""

import sys

from _gpudoctor_child import emit


def text_of(exc):
    """NVML's own words (nvmlErrorString: "Driver/library version mismatch", as nvidia-smi prints);
    pynvml's str() paraphrases some codes ("RM has detected an NVML/RM version mismatch.")."""
    import pynvml

    value = getattr(exc, "value", None)
    if isinstance(value, int):
        try:
            text = pynvml.nvmlErrorString(value)
            return text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        except Exception:
            pass
    return str(exc) or exc.__class__.__name__


def query(errors, label, fn, *args):
    import pynvml

    try:
        return fn(*args)
    except pynvml.NVMLError as exc:
        errors[label] = text_of(exc)
    except Exception as exc:  # an old libnvidia-ml lacks newer symbols: FunctionNotFound etc.
        errors[label] = text_of(exc)
    return None


def as_str(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def describe(index):
    import pynvml

    errors = {}
    gpu = {"index": index, "errors": errors}
    handle = query(errors, "handle", pynvml.nvmlDeviceGetHandleByIndex, index)
    if handle is None:
        return gpu
    gpu["name"] = as_str(query(errors, "name", pynvml.nvmlDeviceGetName, handle))
    gpu["uuid"] = as_str(query(errors, "uuid", pynvml.nvmlDeviceGetUUID, handle))
    pci = query(errors, "pci", pynvml.nvmlDeviceGetPciInfo, handle)
    if pci is not None:
        gpu["pci_bus_id"] = as_str(pci.busId)
    memory = query(errors, "memory", pynvml.nvmlDeviceGetMemoryInfo, handle)
    if memory is not None:
        gpu["memory_total"], gpu["memory_used"], gpu["memory_free"] = memory.total, memory.used, memory.free
    util = query(errors, "utilization", pynvml.nvmlDeviceGetUtilizationRates, handle)
    if util is not None:
        gpu["utilization_gpu"] = util.gpu
    cc = query(errors, "compute_capability", pynvml.nvmlDeviceGetCudaComputeCapability, handle)
    if cc is not None:
        gpu["compute_capability"] = "%d.%d" % tuple(cc)
    mig = query(errors, "mig_mode", pynvml.nvmlDeviceGetMigMode, handle)
    if mig is not None:
        gpu["mig_mode"] = bool(mig[0])
    processes = query(errors, "processes", pynvml.nvmlDeviceGetComputeRunningProcesses, handle) or []
    gpu["processes"] = [process_info(p) for p in processes]
    return gpu


def process_info(p):
    """pid, memory and NVML's name for it; the parent reads user and command line from /proc
    through GPUDOCTOR_SYSROOT (this child's /proc may not be the machine examined)."""
    import pynvml

    used = getattr(p, "usedGpuMemory", None)
    info = {"pid": p.pid, "used_memory": used if isinstance(used, int) and used >= 0 else None}
    try:  # NVML knows the name even of another container's or PID namespace's process
        info["name"] = as_str(pynvml.nvmlSystemGetProcessName(p.pid)) or None
    except Exception:
        pass
    return info


def main():
    try:
        import pynvml
    except ImportError as exc:
        emit("error", "pynvml is not importable: %s" % exc)
        return
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        emit("error", text_of(exc))  # verbatim: "Driver/library version mismatch", "Driver Not Loaded"
        return
    except Exception as exc:
        emit("error", text_of(exc))
        return
    emit("initialized", True)
    errors = {}
    emit("driver_version", as_str(query(errors, "driver_version", pynvml.nvmlSystemGetDriverVersion)))
    emit("cuda_driver_version", query(errors, "cuda_driver_version", pynvml.nvmlSystemGetCudaDriverVersion_v2))
    count = query(errors, "count", pynvml.nvmlDeviceGetCount) or 0
    for index in range(count):
        emit("gpu_%d" % index, describe(index))
    emit("gpu_count", count)
    if errors:
        emit("system_errors", errors)
    try:
        pynvml.nvmlShutdown()
    except Exception:
        pass


main()
sys.stdout.flush()
