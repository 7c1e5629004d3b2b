"""JAX, live: versions, backend, devices, and a tiny matmul on the first GPU vs NumPy on the CPU.

Runs on the TARGET interpreter; stdlib-only apart from jax (and numpy, which it requires);
Python 3.6-compatible.
"""

from _framework_child import Probe, run_op

TOLERANCE = 1e-3  # fp32 matmul, see torch_child


def describe(devices):
    return [{"index": int(getattr(d, "id", i)), "name": str(d), "kind": getattr(d, "device_kind", None),
             "platform": getattr(d, "platform", None)} for i, d in enumerate(devices)]


def matmul_on(jax, device):
    import numpy as np
    rng = np.random.RandomState(0)
    a = (rng.rand(64, 64) * 2 - 1).astype("float32")
    b = (rng.rand(64, 64) * 2 - 1).astype("float32")
    got = jax.numpy.matmul(jax.device_put(a, device), jax.device_put(b, device),
                           precision=jax.lax.Precision.HIGHEST)  # no TF32
    values = np.asarray(got.block_until_ready())
    return values.ravel().tolist(), (a @ b).ravel().tolist(), str(device)


def main():
    probe = Probe("jax")
    jax = probe.import_module("jax")
    if jax is None:
        return
    probe.phase("query")
    probe.set("version", getattr(jax, "__version__", None))
    details = {}
    try:
        import jaxlib
        details["jaxlib"] = getattr(jaxlib, "__version__", None) or jaxlib.version.__version__
    except Exception as exc:
        probe.error("jaxlib", exc)
    probe.phase("devices")
    try:
        details["backend"] = jax.default_backend()
        details["devices"] = describe(jax.devices())
    except Exception as exc:
        probe.error("devices", exc)
    probe.set("details", details)
    gpus = []
    try:
        gpus = jax.devices("gpu")
    except Exception as exc:  # "Unknown backend: 'gpu' requested, but no platforms ... are present"
        probe.set("cuda_init_error", str(exc))
    probe.set("devices", describe(gpus))
    probe.set("device_count", len(gpus))
    probe.set("gpu_available", bool(gpus))
    probe.set("built_with_cuda", bool(gpus) or None)
    probe.loaded_libraries()
    if gpus:
        probe.phase("op")
        probe.set("ops", [run_op("matmul", lambda: matmul_on(jax, gpus[0]), TOLERANCE)])
        probe.loaded_libraries()
    else:
        probe.set("op_skipped_reason", "JAX lists no GPU")
    probe.done()


if __name__ == "__main__":
    main()
