"""PyTorch, live: what torch says about CUDA, and a tiny matmul + convolution on the GPU vs the CPU.

Runs on the TARGET interpreter; stdlib-only apart from torch itself; Python 3.6-compatible.
"""

from _framework_child import Probe, run_op

# fp32 on GPU vs CPU with TF32 switched off differs by ~1e-6 on these sizes; 1e-3 is far above
# rounding noise and far below any real fault (a wrong kernel gives errors of order 1).
TOLERANCE = 1e-3


def cudnn_version_text(raw):
    """torch.backends.cudnn.version(): 8902 for 8.9.2 (cuDNN 8), 90100 for 9.1.0 (cuDNN 9+)."""
    if raw is None:
        return None
    raw = int(raw)
    if raw >= 90000:
        return "%d.%d.%d" % (raw // 10000, (raw % 10000) // 100, raw % 100)
    return "%d.%d.%d" % (raw // 1000, (raw % 1000) // 100, raw % 100)


def describe_devices(torch, probe, count):
    devices = []
    for index in range(count):
        entry = {"index": index}
        try:
            props = torch.cuda.get_device_properties(index)
            entry["name"] = props.name
            entry["compute_capability"] = "%d.%d" % (props.major, props.minor)
            entry["total_memory"] = int(props.total_memory)
        except Exception as exc:
            probe.error("device_%d" % index, exc)
        devices.append(entry)
    return probe.set("devices", devices)


def matmul_check(torch):
    gen = torch.Generator().manual_seed(0)
    a = torch.rand(64, 64, generator=gen) * 2 - 1
    b = torch.rand(64, 64, generator=gen) * 2 - 1
    want = a @ b
    got = (a.cuda() @ b.cuda())
    torch.cuda.synchronize()
    return got.cpu().flatten().tolist(), want.flatten().tolist(), str(got.device)


def conv_check(torch):
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(1, 3, 16, 16, generator=gen) * 2 - 1
    w = torch.rand(4, 3, 3, 3, generator=gen) * 2 - 1
    want = torch.nn.functional.conv2d(x, w, padding=1)
    got = torch.nn.functional.conv2d(x.cuda(), w.cuda(), padding=1)  # cuDNN when it is usable
    torch.cuda.synchronize()
    return got.cpu().flatten().tolist(), want.flatten().tolist(), str(got.device)


def gpu_checks(torch, probe):
    probe.phase("op")
    try:  # compare like with like: TF32 would differ from the CPU by ~1e-3 by design
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    except Exception:
        pass
    try:
        tiny = torch.zeros(1, device="cuda")
        probe.set("cudnn_acceptable", bool(torch.backends.cudnn.is_acceptable(tiny)))
    except Exception as exc:
        probe.error("cudnn_acceptable", exc)
    ops = [run_op("matmul", lambda: matmul_check(torch), TOLERANCE)]
    probe.set("ops", ops)
    ops.append(run_op("conv2d", lambda: conv_check(torch), TOLERANCE))
    probe.set("ops", ops)


def main():
    probe = Probe("torch")
    torch = probe.import_module("torch")
    if torch is None:
        return
    probe.phase("query")
    probe.set("version", str(torch.__version__))
    cuda = probe.set("cuda_version", getattr(torch.version, "cuda", None))
    hip = getattr(torch.version, "hip", None)
    probe.set("details", {"hip": hip, "git_version": getattr(torch.version, "git_version", None),
                          "debug": getattr(torch.version, "debug", None)})
    probe.set("built_with_cuda", cuda is not None)
    raw = probe.query("cudnn_version_raw", lambda: torch.backends.cudnn.version())
    probe.set("cudnn_version", cudnn_version_text(raw))
    available = probe.query("gpu_available", lambda: torch.cuda.is_available())
    count = probe.query("device_count", lambda: torch.cuda.device_count()) or 0
    probe.query("arch_list", lambda: torch.cuda.get_arch_list())
    if (cuda or hip) and not available:
        try:  # is_available() is silent; init() says why (no driver, driver too old, ...)
            torch.cuda.init()
        except Exception as exc:
            probe.set("cuda_init_error", str(exc))
    probe.loaded_libraries()
    if available and count:
        probe.phase("devices")
        describe_devices(torch, probe, count)
        try:
            nccl = torch.cuda.nccl.version()
            probe.set("nccl_version", ".".join(str(p) for p in nccl) if isinstance(nccl, tuple) else str(nccl))
        except Exception as exc:
            probe.error("nccl_version", exc)
        gpu_checks(torch, probe)
        probe.loaded_libraries()  # cuDNN and cuBLAS are loaded lazily, by the first op
    else:
        probe.set("op_skipped_reason", "torch.cuda.is_available() is False")
    probe.done()


if __name__ == "__main__":
    main()
