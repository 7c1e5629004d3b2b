"""ctypes helpers shared by the child scripts that load NVIDIA libraries (stdlib only)."""

import ctypes
import os


class _DlInfoLinkMap(ctypes.Structure):
    _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]


_RTLD_DI_LINKMAP = 2


def real_path_of(lib):
    """The file a loaded ctypes.CDLL really came from (dlinfo), resolved through symlinks."""
    try:
        libdl = ctypes.CDLL(None)
        dlinfo = libdl.dlinfo
        dlinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        linkmap = ctypes.POINTER(_DlInfoLinkMap)()
        if dlinfo(lib._handle, _RTLD_DI_LINKMAP, ctypes.byref(linkmap)) == 0 and linkmap:
            name = linkmap.contents.l_name
            if name:
                return os.path.realpath(name.decode("utf-8", "replace"))
    except (AttributeError, OSError, ValueError):
        pass
    return None


def load(soname):
    """(library or None, error text or None). The error is dlerror's text, kept verbatim."""
    try:
        return ctypes.CDLL(soname), None
    except OSError as exc:
        return None, str(exc)
