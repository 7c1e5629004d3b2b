"""What every framework child shares: the timed import, phases, error capture, loaded libraries.

Stdlib-only and Python 3.6-compatible: it runs on the TARGET interpreter next to the framework.
Every fact is emitted as soon as it is known, and the phase before each risky step, so that the
parent can say where a child that segfaulted or hung was ("hung during import").

Usage: NAME_child.py [--stderr-file PATH]. With --stderr-file, everything written to fd 1 and 2
(Python tracebacks, the framework's own C++ logging) goes to that file, which the parent reads
whole even when the child is killed: a pipe would keep only what fits in its tail.
"""

import os
import sys
import time
import traceback

from _gpudoctor_child import emit, open_channel

# Libraries worth naming when they are mapped into the process: CUDA, cuDNN, NCCL, the driver.
LOADED_LIBRARY_MARKERS = ("libcuda.", "libcudart", "libcublas", "libcudnn", "libcufft", "libcurand", "libcusolver",
                          "libcusparse", "libnccl", "libnvrtc", "libnvJitLink", "libnvToolsExt", "libcupti",
                          "libnvidia-ml", "libtorch_cuda", "libc10_cuda", "libcaffe2_nvrtc", "libnvinfer",
                          "libcufile", "libnvshmem", "xla_cuda", "cuda_plugin", "libamdhip64")


def _redirect_output(argv):
    if "--stderr-file" not in argv:
        return
    path = argv[argv.index("--stderr-file") + 1]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.dup2(fd, 1)
    os.close(fd)


def exception_text(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return text if len(text) <= 4000 else text[:4000] + " ..."


class Probe(object):
    """One framework child's state; every setter emits at once."""

    def __init__(self, name):
        open_channel()  # first: fd 1 now points at stderr, the private channel carries JSON
        _redirect_output(sys.argv)
        self.name = name
        self.errors = {}
        emit("pid", os.getpid())

    def phase(self, name):
        emit("phase", name)

    def set(self, key, value):
        emit(key, value)
        return value

    def query(self, key, func, *args):
        """Call func; emit its value under key, or record the exception under errors[key]. Pass a
        lambda, not `tf.test.is_built_with_cuda`: a broken install may lack the attribute itself."""
        try:
            value = func(*args)
        except Exception as exc:  # a framework query failing is a fact, not a crash
            self.error(key, exc)
            return None
        emit(key, value)
        return value

    def error(self, key, exc):
        self.errors[key] = exception_text(exc)
        emit("errors", self.errors)

    def import_module(self, module_name):
        self.phase("import")
        started = time.time()
        try:
            module = __import__(module_name)
        except BaseException as exc:  # SystemExit and friends from a broken package count too
            emit("import", {"ok": False, "seconds": round(time.time() - started, 3),
                            "error": exception_text(exc), "traceback": traceback.format_exc()[-8000:]})
            return None
        emit("import", {"ok": True, "seconds": round(time.time() - started, 3)})
        return module

    def loaded_libraries(self):
        emit("loaded_libraries", loaded_libraries())

    def done(self):
        """Everything is said: leave now. A framework's interpreter teardown (torch: ~0.3 s of
        destructors) would only add to the wall time of every check."""
        self.phase("done")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def loaded_libraries():
    """Real paths of the CUDA-related shared objects mapped into this process (/proc/self/maps)."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                base = os.path.basename(path)
                if path.startswith("/") and any(m in base for m in LOADED_LIBRARY_MARKERS):
                    real = os.path.realpath(path)
                    if real not in found:
                        found.append(real)
    except (OSError, IOError):
        return []
    return found


def max_abs_error(got, want):
    """Largest |got - want| over two flat sequences of numbers."""
    worst = 0.0
    for g, w in zip(got, want):
        diff = abs(float(g) - float(w))
        if diff != diff:  # NaN: a wrong result by any standard
            return float("inf")
        worst = max(worst, diff)
    return worst


def timed(func):
    started = time.time()
    value = func()
    return value, round(time.time() - started, 4)


def run_op(name, func, tolerance):
    """Run one GPU-vs-CPU comparison; func returns (gpu_values, cpu_values, device_string_or_None)."""
    record = {"name": name, "ran": False, "ok": None, "tolerance": tolerance}
    started = time.time()
    try:
        got, want, device = func()
    except Exception as exc:
        record["error"] = exception_text(exc)
        record["seconds"] = round(time.time() - started, 4)
        return record
    record["seconds"] = round(time.time() - started, 4)
    record["ran"] = True
    record["device"] = device
    err = max_abs_error(got, want)
    record["max_abs_error"] = err
    record["ok"] = err <= tolerance
    return record
