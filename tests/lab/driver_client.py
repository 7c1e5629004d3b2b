"""A tiny CUDA driver-API client (stdlib + ctypes), run in a child process by the lab's tests.

    python driver_client.py devices          # cuInit, versions, every device's properties
    python driver_client.py vadd [DEVICE]    # context, copies, PTX vadd kernel, result check
    python driver_client.py contexts         # try a context on every device
    python driver_client.py errors CODE...   # cuGetErrorName / cuGetErrorString

It prints one JSON object. It loads ``libcuda.so.1`` the way gpudoctor's probes do, through
the dynamic loader (so LD_LIBRARY_PATH selects the lab's stand-in).
"""

from __future__ import annotations

import ctypes
import json
import struct
import sys
import uuid as uuidlib
from pathlib import Path

# The same kernel gpudoctor's driver-API test launches.
VADD_PTX = (Path(__file__).resolve().parents[2] / "gpudoctor" / "probes" / "children" / "vadd.ptx").read_bytes() + b"\0"

ATTRS = {"cc_major": 75, "cc_minor": 76, "pci_bus": 33, "pci_device": 34, "pci_domain": 50, "sm_count": 16}


def load():
    cu = ctypes.CDLL("libcuda.so.1")
    return cu


def err_name(cu, code):
    s = ctypes.c_char_p()
    r = cu.cuGetErrorName(code, ctypes.byref(s))
    return s.value.decode() if r == 0 and s.value else None


def devices(cu):
    out = {}
    v = ctypes.c_int()
    out["cuDriverGetVersion"] = [cu.cuDriverGetVersion(ctypes.byref(v)), v.value]
    out["cuInit"] = cu.cuInit(0)
    out["cuInit_name"] = err_name(cu, out["cuInit"])
    n = ctypes.c_int(-1)
    out["cuDeviceGetCount"] = [cu.cuDeviceGetCount(ctypes.byref(n)), n.value]
    out["devices"] = []
    for i in range(max(n.value, 0)):
        d = ctypes.c_int()
        assert cu.cuDeviceGet(ctypes.byref(d), i) == 0
        name = ctypes.create_string_buffer(256)
        assert cu.cuDeviceGetName(name, 256, d) == 0
        bus = ctypes.create_string_buffer(64)
        assert cu.cuDeviceGetPCIBusId(bus, 64, d) == 0
        mem = ctypes.c_size_t()
        assert cu.cuDeviceTotalMem_v2(ctypes.byref(mem), d) == 0
        u1, u2 = ctypes.create_string_buffer(16), ctypes.create_string_buffer(16)
        assert cu.cuDeviceGetUuid(u1, d) == 0
        assert cu.cuDeviceGetUuid_v2(u2, d) == 0
        attrs = {}
        for key, attr in ATTRS.items():
            val = ctypes.c_int()
            assert cu.cuDeviceGetAttribute(ctypes.byref(val), attr, d) == 0
            attrs[key] = val.value
        out["devices"].append({
            "name": name.value.decode(), "pci_bus_id": bus.value.decode(), "total_bytes": mem.value,
            "uuid": str(uuidlib.UUID(bytes=u1.raw)), "uuid_v2": str(uuidlib.UUID(bytes=u2.raw)), **attrs,
        })
    return out


def contexts(cu):
    out = {"cuInit": cu.cuInit(0), "contexts": []}
    n = ctypes.c_int(0)
    cu.cuDeviceGetCount(ctypes.byref(n))
    for i in range(n.value):
        ctx = ctypes.c_void_p()
        r = cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, i)
        rec = {"create": r, "name": err_name(cu, r)}
        if r == 0:
            free, total = ctypes.c_size_t(), ctypes.c_size_t()
            rec["meminfo"] = [cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), free.value, total.value]
            rec["destroy"] = cu.cuCtxDestroy_v2(ctx)
        pctx = ctypes.c_void_p()
        rec["primary_retain"] = cu.cuDevicePrimaryCtxRetain(ctypes.byref(pctx), i)
        if rec["primary_retain"] == 0:
            rec["primary_release"] = cu.cuDevicePrimaryCtxRelease_v2(i)
        out["contexts"].append(rec)
    return out


def vadd(cu, dev=0, n=1000, ptx=VADD_PTX, grid=None):
    out = {"cuInit": cu.cuInit(0)}
    steps = out["steps"] = {}

    def step(name, r):
        steps[name] = r
        if r != 0:
            raise RuntimeError(name)

    ctx = ctypes.c_void_p()
    try:
        step("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
        step("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))
        mod = ctypes.c_void_p()
        step("cuModuleLoadDataEx", cu.cuModuleLoadDataEx(ctypes.byref(mod), ctypes.c_char_p(ptx), 0, None, None))
        fn = ctypes.c_void_p()
        step("cuModuleGetFunction", cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"vadd"))
        a = [float(i) * 0.5 for i in range(n)]
        b = [float(n - i) for i in range(n)]
        host_a = (ctypes.c_float * n)(*a)
        host_b = (ctypes.c_float * n)(*b)
        host_c = (ctypes.c_float * n)()
        ptrs = [ctypes.c_uint64() for _ in range(3)]
        for p in ptrs:
            step("cuMemAlloc_v2", cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(4 * n)))
        step("cuMemcpyHtoD_v2", cu.cuMemcpyHtoD_v2(ptrs[0], host_a, ctypes.c_size_t(4 * n)))
        step("cuMemcpyHtoD_v2", cu.cuMemcpyHtoD_v2(ptrs[1], host_b, ctypes.c_size_t(4 * n)))
        count = ctypes.c_uint32(n)
        params = (ctypes.c_void_p * 4)(*[ctypes.cast(ctypes.byref(p), ctypes.c_void_p) for p in ptrs],
                                        ctypes.cast(ctypes.byref(count), ctypes.c_void_p))
        block = 128
        blocks = grid if grid is not None else (n + block - 1) // block
        step("cuLaunchKernel", cu.cuLaunchKernel(fn, blocks, 1, 1, block, 1, 1, 0, None, params, None))
        step("cuCtxSynchronize", cu.cuCtxSynchronize())
        step("cuMemcpyDtoH_v2", cu.cuMemcpyDtoH_v2(host_c, ptrs[2], ctypes.c_size_t(4 * n)))
        want = [struct.unpack("f", struct.pack("f", x + y))[0] for x, y in zip(
            [struct.unpack("f", struct.pack("f", v))[0] for v in a],
            [struct.unpack("f", struct.pack("f", v))[0] for v in b])]
        out["correct"] = list(host_c) == want
        out["first"] = list(host_c)[:4]
        for p in ptrs:
            step("cuMemFree_v2", cu.cuMemFree_v2(p))
        step("cuModuleUnload", cu.cuModuleUnload(mod))
        step("cuDevicePrimaryCtxRelease_v2", cu.cuDevicePrimaryCtxRelease_v2(dev))
        out["ok"] = True
    except RuntimeError as e:
        out["ok"] = False
        out["failed_at"] = str(e)
        out["error"] = steps[str(e)]
        out["error_name"] = err_name(cu, steps[str(e)])
    return out


def errors(cu, codes):
    res = {}
    for c in codes:
        n, s = ctypes.c_char_p(), ctypes.c_char_p()
        r1 = cu.cuGetErrorName(c, ctypes.byref(n))
        r2 = cu.cuGetErrorString(c, ctypes.byref(s))
        res[str(c)] = [r1, n.value.decode() if n.value else None, r2, s.value.decode() if s.value else None]
    return res


def main(argv):
    cu = load()
    cmd = argv[1] if len(argv) > 1 else "devices"
    if cmd == "devices":
        out = devices(cu)
    elif cmd == "contexts":
        out = contexts(cu)
    elif cmd == "vadd":
        out = vadd(cu, int(argv[2]) if len(argv) > 2 else 0)
    elif cmd == "errors":
        out = errors(cu, [int(x) for x in argv[2:]])
    else:
        raise SystemExit("unknown command " + cmd)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)
