"""The framework-free GPU test: on each visible device (up to a limit), create a context, copy
two vectors in, run a tiny PTX vector add, copy the sum out and compare with the CPU.

Passing proves the GPU and driver work, whatever the frameworks say. Stdlib only. Argument:
the maximum number of devices to test.
"""

import ctypes
import os
import struct
import sys
import time

from _gpudoctor_child import emit
from _native import load

N = 4096
# The kernel: PTX ISA 6.0 (CUDA 9) for sm_30, old enough for every driver since CUDA 9 to JIT, and
# still accepted by CUDA 13's compiler for sm_75 ... sm_120 (checked with ptxas). A file beside this
# script, shared with the lab's own driver-API client.
PTX_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vadd.ptx")


def load_ptx():
    with open(PTX_FILE, "rb") as handle:
        return handle.read() + b"\0"


class StepFailed(Exception):
    def __init__(self, step, code):
        Exception.__init__(self, step)
        self.step, self.code = step, code


def error_text(cuda, code):
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    cuda.cuGetErrorName(code, ctypes.byref(name))
    cuda.cuGetErrorString(code, ctypes.byref(text))
    return (name.value.decode() if name.value else None, text.value.decode() if text.value else None)


def call(step, fn, *args):
    code = fn(*args)
    if code != 0:
        raise StepFailed(step, code)


def vector_add(cuda, ordinal, result):
    size = N * 4
    a = [float(i % 97) * 0.5 for i in range(N)]
    b = [float(i % 89) * 0.25 + 1.0 for i in range(N)]
    host_a = ctypes.create_string_buffer(struct.pack("%df" % N, *a), size)
    host_b = ctypes.create_string_buffer(struct.pack("%df" % N, *b), size)
    host_c = ctypes.create_string_buffer(size)
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    d_a, d_b, d_c = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
    module, func = ctypes.c_void_p(), ctypes.c_void_p()
    call("context", cuda.cuDeviceGet, ctypes.byref(dev), ordinal)
    bus = ctypes.create_string_buffer(64)
    if cuda.cuDeviceGetPCIBusId(bus, 64, dev) == 0:
        result["pci_bus_id"] = bus.value.decode()
    call("context", cuda.cuCtxCreate_v2, ctypes.byref(ctx), 0, dev)
    try:
        for ptr in (d_a, d_b, d_c):
            call("alloc", cuda.cuMemAlloc_v2, ctypes.byref(ptr), ctypes.c_size_t(size))
        call("copy-in", cuda.cuMemcpyHtoD_v2, d_a, host_a, ctypes.c_size_t(size))
        call("copy-in", cuda.cuMemcpyHtoD_v2, d_b, host_b, ctypes.c_size_t(size))
        call("module", cuda.cuModuleLoadData, ctypes.byref(module), ctypes.c_char_p(load_ptx()))
        call("module", cuda.cuModuleGetFunction, ctypes.byref(func), module, b"vadd")
        n = ctypes.c_uint32(N)
        params = (ctypes.c_void_p * 4)(*[ctypes.cast(ctypes.byref(x), ctypes.c_void_p) for x in (d_a, d_b, d_c, n)])
        threads = 256
        started = time.perf_counter()
        call("launch", cuda.cuLaunchKernel, func, (N + threads - 1) // threads, 1, 1, threads, 1, 1, 0, None, params, None)
        call("launch", cuda.cuCtxSynchronize)
        result["seconds"] = round(time.perf_counter() - started, 6)
        call("copy-out", cuda.cuMemcpyDtoH_v2, host_c, d_c, ctypes.c_size_t(size))
        c = struct.unpack("%df" % N, host_c.raw)
        # Inputs are exact in float32 and so are their sums: any difference is a wrong result.
        result["max_abs_error"] = max(abs(c[i] - (a[i] + b[i])) for i in range(N))
        result["step"], result["ok"] = "compare", result["max_abs_error"] == 0.0
        if result["ok"]:
            result["step"] = "done"
    finally:
        cuda.cuCtxDestroy_v2(ctx)


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    cuda, error = load("libcuda.so.1")
    if cuda is None:
        emit("skipped", "libcuda.so.1 cannot be loaded: %s" % error)
        return
    emit("init_started", True)
    code = cuda.cuInit(0)
    emit("init_returned", code)
    if code != 0:
        emit("skipped", "cuInit failed with %d (%s)" % (code, error_text(cuda, code)[0]))
        return
    count = ctypes.c_int()
    call("context", cuda.cuDeviceGetCount, ctypes.byref(count))
    emit("device_count", count.value)
    for ordinal in range(min(count.value, limit)):
        result = {"ordinal": ordinal, "elements": N, "ok": False, "step": "context"}
        emit("device_%d" % ordinal, result)  # a crash inside this device's test leaves this record
        try:
            vector_add(cuda, ordinal, result)
        except StepFailed as failed:
            result["step"], result["error_code"] = failed.step, failed.code
            result["error_name"], result["error_string"] = error_text(cuda, failed.code)
        emit("device_%d" % ordinal, result)


main()
