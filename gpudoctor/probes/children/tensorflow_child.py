"""TensorFlow, live: build info, GPUs, and a tiny matmul placed on /GPU:0 (placement verified).

Runs on the TARGET interpreter; stdlib-only apart from tensorflow (and numpy, which it requires);
Python 3.6-compatible. TensorFlow reports GPU trouble only in its C++ log on stderr; the parent
runs this child with TF_CPP_MIN_LOG_LEVEL=0 and parses that log (probes/frameworks/logparse.py).
"""

from _framework_child import Probe, run_op

# fp32 matmul on GPU vs CPU with TF32 off: rounding noise ~1e-6 at this size (see torch_child).
TOLERANCE = 1e-3


def list_devices(tf, kind, logical=False):
    config = tf.config
    name = ("list_logical_devices" if logical else "list_physical_devices")
    func = getattr(config, name, None) or getattr(config.experimental, name)
    return func(kind)


def device_details(tf, probe, gpus):
    devices = []
    for index, gpu in enumerate(gpus):
        entry = {"index": index, "kind": getattr(gpu, "device_type", None), "name": gpu.name}
        try:
            details = tf.config.experimental.get_device_details(gpu)
            entry["name"] = details.get("device_name", gpu.name)
            cc = details.get("compute_capability")
            if cc:
                entry["compute_capability"] = "%d.%d" % tuple(cc)
        except Exception as exc:  # get_device_details is TF >= 2.3
            probe.error("device_details_%d" % index, exc)
        devices.append(entry)
    return probe.set("devices", devices)


def matmul_on_gpu(tf):
    import numpy as np
    rng = np.random.RandomState(0)
    a = (rng.rand(64, 64) * 2 - 1).astype("float32")
    b = (rng.rand(64, 64) * 2 - 1).astype("float32")
    with tf.device("/CPU:0"):
        want = tf.matmul(a, b)
    with tf.device("/GPU:0"):
        got = tf.matmul(a, b)
    values = got.numpy()  # waits for the GPU
    return values.ravel().tolist(), want.numpy().ravel().tolist(), got.device


def gpu_check(tf, probe):
    probe.phase("op")
    try:
        tf.config.experimental.enable_tensor_float_32_execution(False)
    except Exception:
        pass
    try:  # without this, an op that cannot run on the GPU silently runs on the CPU
        tf.config.set_soft_device_placement(False)
    except Exception:
        pass
    record = run_op("matmul", lambda: matmul_on_gpu(tf), TOLERANCE)
    device = record.get("device") or ""
    record["placement_verified"] = device.endswith("GPU:0") if record["ran"] else None
    if record["ran"] and not record["placement_verified"]:
        record["ok"] = False
        record["error"] = "the op ran on %s, not on /GPU:0" % device
    probe.set("ops", [record])


def main():
    probe = Probe("tensorflow")
    tf = probe.import_module("tensorflow")
    if tf is None:
        return
    probe.phase("query")
    version = getattr(tf, "__version__", None) or getattr(getattr(tf, "version", None), "VERSION", None)
    probe.set("version", version)
    probe.query("built_with_cuda", lambda: tf.test.is_built_with_cuda())
    try:
        info = dict(tf.sysconfig.get_build_info())  # TF >= 2.3
        probe.set("details", {"build_info": info})
        probe.set("cuda_version", info.get("cuda_version"))
        probe.set("cudnn_version", info.get("cudnn_version"))
    except Exception as exc:
        probe.error("build_info", exc)
    probe.phase("devices")
    try:
        gpus = list_devices(tf, "GPU")
    except Exception as exc:
        probe.error("physical_gpus", exc)
        gpus = []
    probe.set("physical_gpus", [gpu.name for gpu in gpus])
    probe.set("device_count", len(gpus))
    device_details(tf, probe, gpus)
    logical = probe.query("logical_gpus", lambda: [d.name for d in list_devices(tf, "GPU", logical=True)])
    probe.set("gpu_available", bool(gpus) and bool(logical))
    probe.loaded_libraries()
    if gpus and logical:
        if tf.executing_eagerly():
            gpu_check(tf, probe)
            probe.loaded_libraries()
        else:
            probe.set("op_skipped_reason", "TensorFlow runs in graph mode (1.x); the op check needs eager mode")
    else:
        probe.set("op_skipped_reason", "TensorFlow lists no usable GPU")
    probe.done()


if __name__ == "__main__":
    main()
