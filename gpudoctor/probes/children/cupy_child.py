"""CuPy, live: CUDA runtime and driver versions, devices, and a tiny reduction vs the CPU.

Runs on the TARGET interpreter; stdlib-only apart from cupy (and numpy, which it requires);
Python 3.6-compatible.
"""

from _framework_child import Probe, run_op

TOLERANCE = 1e-3  # a float32 sum of 1000 small terms; rounding noise is ~1e-5


def version_text(raw):
    """CUDA encodes versions as 1000 * major + 10 * minor (12040 -> 12.4)."""
    return None if raw is None else "%d.%d" % (raw // 1000, (raw % 1000) // 10)


def describe_devices(cupy, probe, count):
    devices = []
    for index in range(count):
        entry = {"index": index}
        try:
            props = cupy.cuda.runtime.getDeviceProperties(index)
            name = props.get("name")
            entry["name"] = name.decode() if isinstance(name, bytes) else name
            entry["compute_capability"] = "%d.%d" % (props["major"], props["minor"])
            entry["total_memory"] = int(props["totalGlobalMem"])
        except Exception as exc:
            probe.error("device_%d" % index, exc)
        devices.append(entry)
    probe.set("devices", devices)


def square_sum(cupy):
    import numpy as np
    host = (np.arange(1000, dtype="float32") / 1000.0)
    got = float(cupy.asarray(host).dot(cupy.asarray(host)))
    return [got], [float(host.astype("float64").dot(host.astype("float64")))], "cuda:0"


def main():
    probe = Probe("cupy")
    cupy = probe.import_module("cupy")
    if cupy is None:
        return
    probe.phase("query")
    probe.set("version", getattr(cupy, "__version__", None))
    probe.set("built_with_cuda", True)  # every CuPy wheel is a CUDA (or ROCm) build
    runtime = probe.query("runtime_version_raw", lambda: cupy.cuda.runtime.runtimeGetVersion())
    probe.set("cuda_version", version_text(runtime))
    driver = probe.query("driver_version_raw", lambda: cupy.cuda.runtime.driverGetVersion())
    probe.set("details", {"driver_cuda_version": version_text(driver) if driver else None})
    count = 0
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError: cudaErrorNoDevice, cudaErrorInsufficientDriver, ...
        probe.set("cuda_init_error", str(exc))
    probe.set("device_count", count)
    probe.set("gpu_available", count > 0)
    probe.loaded_libraries()
    if count:
        probe.phase("devices")
        describe_devices(cupy, probe, count)
        probe.phase("op")
        probe.set("ops", [run_op("dot", lambda: square_sum(cupy), TOLERANCE)])
        probe.loaded_libraries()
    else:
        probe.set("op_skipped_reason", "CuPy sees no CUDA device")
    probe.done()


if __name__ == "__main__":
    main()
