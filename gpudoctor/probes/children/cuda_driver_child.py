"""Ask libcuda.so.1 what it knows, through ctypes. Runs in the user's environment (so
CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER apply, exactly as for their programs).

Facts are emitted one by one: if cuInit hangs or crashes, what came before still arrives.
"""

import ctypes

from _gpudoctor_child import emit
from _native import load, real_path_of

# CUdevice_attribute values from cuda.h
ATTR_MULTIPROCESSOR_COUNT = 16
ATTR_PCI_BUS_ID = 33
ATTR_PCI_DEVICE_ID = 34
ATTR_COMPUTE_CAPABILITY_MAJOR = 75
ATTR_COMPUTE_CAPABILITY_MINOR = 76
ATTR_PCI_DOMAIN_ID = 50


def error_text(cuda, code):
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    try:
        cuda.cuGetErrorName(code, ctypes.byref(name))
        cuda.cuGetErrorString(code, ctypes.byref(text))
    except AttributeError:
        pass
    return (name.value.decode() if name.value else None, text.value.decode() if text.value else None)


def uuid_of(cuda, dev):
    raw = (ctypes.c_ubyte * 16)()
    fn = getattr(cuda, "cuDeviceGetUuid_v2", None) or getattr(cuda, "cuDeviceGetUuid", None)
    if fn is None or fn(ctypes.byref(raw), dev) != 0:
        return None
    h = "".join("%02x" % b for b in raw)
    return "GPU-%s-%s-%s-%s-%s" % (h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])


def attribute(cuda, dev, attr):
    value = ctypes.c_int()
    if cuda.cuDeviceGetAttribute(ctypes.byref(value), attr, dev) != 0:
        return None
    return value.value


def describe(cuda, ordinal):
    dev = ctypes.c_int()
    if cuda.cuDeviceGet(ctypes.byref(dev), ordinal) != 0:
        return {"ordinal": ordinal}
    name = ctypes.create_string_buffer(256)
    cuda.cuDeviceGetName(name, 256, dev)
    total = ctypes.c_size_t()
    total_fn = getattr(cuda, "cuDeviceTotalMem_v2", None) or cuda.cuDeviceTotalMem
    bus = ctypes.create_string_buffer(64)
    info = {
        "ordinal": ordinal,
        "name": name.value.decode("utf-8", "replace") or None,
        "total_memory": total.value if total_fn(ctypes.byref(total), dev) == 0 else None,
        "uuid": uuid_of(cuda, dev),
        "multiprocessor_count": attribute(cuda, dev, ATTR_MULTIPROCESSOR_COUNT),
    }
    major = attribute(cuda, dev, ATTR_COMPUTE_CAPABILITY_MAJOR)
    minor = attribute(cuda, dev, ATTR_COMPUTE_CAPABILITY_MINOR)
    if major is not None and minor is not None:
        info["compute_capability"] = "%d.%d" % (major, minor)
    if cuda.cuDeviceGetPCIBusId(bus, 64, dev) == 0:
        info["pci_bus_id"] = bus.value.decode()
    return info


def main():
    cuda, error = load("libcuda.so.1")
    if cuda is None:
        emit("load_error", error)
        return
    emit("path", real_path_of(cuda))
    version = ctypes.c_int()
    if cuda.cuDriverGetVersion(ctypes.byref(version)) == 0:  # answers even without a kernel module
        emit("driver_version", version.value)
    emit("init_started", True)
    result = cuda.cuInit(0)
    name, text = error_text(cuda, result)
    emit("init", {"result": result, "name": name, "string": text})
    if result != 0:
        return
    count = ctypes.c_int()
    if cuda.cuDeviceGetCount(ctypes.byref(count)) == 0:
        emit("device_count", count.value)
        emit("devices", [describe(cuda, i) for i in range(count.value)])


main()
