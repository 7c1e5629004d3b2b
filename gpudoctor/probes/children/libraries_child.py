"""Load CUDA libraries the way a program in the user's environment would, and ask their versions.

Stdlib only, Python 3.6 syntax: it runs in the target interpreter, with the user's environment
(LD_LIBRARY_PATH included) and usually with -S.

argv[1] is JSON: {"resolve": [[family, soname], ...], "copies": [[family, soname, path], ...]}.
Phase 1 does a plain dlopen(soname) for each soname: the loader's own search, exactly what a
program gets. Phase 2 then loads every other copy by its path to ask it its version; it runs
second because a library loaded by path would otherwise answer a later dlopen of its soname.
Each answer is emitted at once ("resolve:<soname>", "copy:<path>"), so a crash loses little.
None of these version queries needs a GPU, except the CUDA 11 runtime's, which answers 35/100
without a working driver (then the parent falls back to the file name).
"""

import ctypes
import json
import os
import sys

from _gpudoctor_child import emit

RTLD_DI_LINKMAP = 2
MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL = 0, 1, 2  # libraryPropertyType


class _LinkMap(ctypes.Structure):
    _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]


def _dlinfo():
    for name in (None, "libdl.so.2"):  # glibc >= 2.34 has dlinfo in libc itself
        try:
            fn = ctypes.CDLL(name).dlinfo
        except (OSError, AttributeError):
            continue
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        return fn
    return None


_DLINFO = _dlinfo()


def loaded_path(lib, soname):
    """Real path of a loaded library: dlinfo's link map, else /proc/self/maps."""
    if _DLINFO is not None:
        lm = ctypes.POINTER(_LinkMap)()
        if _DLINFO(lib._handle, RTLD_DI_LINKMAP, ctypes.byref(lm)) == 0 and lm and lm.contents.l_name:
            return os.path.realpath(lm.contents.l_name.decode("utf-8", "replace"))
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(None, 5)[-1].strip()
                if os.path.basename(path).startswith(soname):
                    return os.path.realpath(path)
    except OSError:
        pass
    return None


# -- decoding the numbers the libraries answer (documented formats) --------------------------------

def decode_cudart(code):
    """cudaRuntimeGetVersion: 1000 * major + 10 * minor (12090 -> 12.9)."""
    return "%d.%d" % (code // 1000, (code % 1000) // 10)


def decode_cudnn(code):
    """cudnnGetVersion: cuDNN >= 9 is major*10000 + minor*100 + patch (90100 -> 9.1.0);
    cuDNN <= 8 was major*1000 + minor*100 + patch (8902 -> 8.9.2)."""
    div = 10000 if code >= 10000 else 1000
    return "%d.%d.%d" % (code // div, (code % div) // 100, code % 100)


def decode_nccl(code):
    """ncclGetVersion: from 2.9 major*10000 + minor*100 + patch (22105 -> 2.21.5); before, *1000."""
    return decode_cudnn(code)  # the same two layouts, switching at 10000


# -- version queries -------------------------------------------------------------------------------

def _int_out(fn, name):
    value = ctypes.c_int(-1)
    status = fn(ctypes.byref(value))
    if status != 0:
        raise QueryError("%s returned %d" % (name, status))
    return value.value


class QueryError(Exception):
    pass


def _properties(lib, prefix):
    fn = getattr(lib, prefix + "GetProperty")
    parts = []
    for prop in (MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL):
        value = ctypes.c_int(-1)
        status = fn(prop, ctypes.byref(value))
        if status != 0:
            raise QueryError("%sGetProperty returned %d" % (prefix, status))
        parts.append(str(value.value))
    return ".".join(parts), None


def _cudart(lib):
    code = _int_out(lib.cudaRuntimeGetVersion, "cudaRuntimeGetVersion")
    return decode_cudart(code), code


def _cudnn(lib):
    lib.cudnnGetVersion.restype = ctypes.c_size_t
    code = int(lib.cudnnGetVersion())
    return decode_cudnn(code), code


def _nccl(lib):
    code = _int_out(lib.ncclGetVersion, "ncclGetVersion")
    return decode_nccl(code), code


def _two_out(fn, name, ctype):
    major, minor = ctype(0), ctype(0)
    status = fn(ctypes.byref(major), ctypes.byref(minor))
    if status != 0:
        raise QueryError("%s returned %d" % (name, status))
    return "%d.%d" % (major.value, minor.value), None


QUERIES = {
    "cudart": _cudart,
    "cublas": lambda lib: _properties(lib, "cublas"),
    "cublasLt": lambda lib: _properties(lib, "cublasLt"),
    "cufft": lambda lib: _properties(lib, "cufft"),
    "curand": lambda lib: _properties(lib, "curand"),
    "cusolver": lambda lib: _properties(lib, "cusolver"),
    "cusparse": lambda lib: _properties(lib, "cusparse"),
    "cudnn": _cudnn,
    "nccl": _nccl,
    "nvrtc": lambda lib: _two_out(lib.nvrtcVersion, "nvrtcVersion", ctypes.c_int),
    "nvJitLink": lambda lib: _two_out(lib.nvJitLinkVersion, "nvJitLinkVersion", ctypes.c_uint),
}


def ask_version(family, lib):
    """(version, code, error): what the library says about itself."""
    query = QUERIES.get(family)
    if query is None:
        return None, None, None
    try:
        version, code = query(lib)
        return version, code, None
    except AttributeError as exc:  # an old library without the query
        return None, None, "no %s" % (str(exc).split(":")[-1].strip() or "version query")
    except QueryError as exc:
        return None, None, str(exc)


def load(name):
    try:
        return ctypes.CDLL(name, mode=os.RTLD_LOCAL if hasattr(os, "RTLD_LOCAL") else 0), None
    except OSError as exc:
        return None, str(exc)


def main():
    request = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    done = set()
    for family, soname in request.get("resolve", []):
        lib, error = load(soname)
        record = {"family": family, "soname": soname, "error": error}
        if lib is not None:
            record["real_path"] = loaded_path(lib, soname)
            record["version"], record["version_code"], record["version_error"] = ask_version(family, lib)
            done.add(record["real_path"])
        emit("resolve:" + soname, record)
    for family, soname, path in request.get("copies", []):
        if os.path.realpath(path) in done:
            continue
        lib, error = load(path)
        record = {"family": family, "soname": soname, "error": error}
        if lib is not None:
            record["real_path"] = loaded_path(lib, soname) or os.path.realpath(path)
            record["version"], record["version_code"], record["version_error"] = ask_version(family, lib)
        emit("copy:" + os.path.realpath(path), record)
    emit("done", True)


if __name__ == "__main__":
    main()
