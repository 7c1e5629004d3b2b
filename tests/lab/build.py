"""Build the lab's C stand-ins for libcuda.so.1 and libnvidia-ml.so.1 on demand.

The libraries are compiled with the system C compiler into a cache directory keyed by a
hash of the sources and the compiler command, ``tests/.cache/lab/<hash>/`` (override the
root with ``GPUDOCTOR_LAB_CACHE``), so a test session compiles them once and every later
session reuses them until a source changes.

Run as a script to build and print the directory: ``python -m tests.lab.build``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
#: soname -> C source
LIBRARIES: Dict[str, str] = {
    "libcuda.so.1": "fake_libcuda.c",
    "libnvidia-ml.so.1": "fake_nvml.c",
}
HEADERS = ["lab_common.h"]
CFLAGS = ["-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-std=gnu11"]
LDLIBS = ["-lpthread"]


class BuildError(RuntimeError):
    pass


def find_compiler() -> Optional[str]:
    for name in (os.environ.get("CC"), "gcc", "cc"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def cache_root() -> Path:
    env = os.environ.get("GPUDOCTOR_LAB_CACHE")
    if env:
        return Path(env)
    return HERE.parent / ".cache" / "lab"


def source_hash(cc: str) -> str:
    h = hashlib.sha256()
    h.update(" ".join([os.path.basename(cc)] + CFLAGS + LDLIBS).encode())
    for name in sorted(list(LIBRARIES.values()) + HEADERS):
        h.update(name.encode() + b"\0")
        h.update((SRC / name).read_bytes())
    return h.hexdigest()[:16]


def _compile(cc: str, out_dir: Path) -> None:
    for soname, source in LIBRARIES.items():
        cmd: List[str] = [cc] + CFLAGS + ["-Wl,-soname," + soname, "-o", str(out_dir / soname),
                                          str(SRC / source)] + LDLIBS
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if proc.returncode != 0:
            raise BuildError("compiling %s failed:\n$ %s\n%s" % (source, " ".join(cmd), proc.stdout))
        # the unversioned development names, for loaders that try them
        link = out_dir / soname.rsplit(".so", 1)[0]
        os.symlink(soname, str(link) + ".so")


def build_libs(force: bool = False) -> Path:
    """Compile the stand-ins (if not cached) and return the directory holding them."""
    cc = find_compiler()
    if cc is None:
        raise BuildError("no C compiler (gcc or cc) on PATH; the GPU lab needs one")
    root = cache_root()
    final = root / source_hash(cc)
    if not force and all((final / soname).is_file() for soname in LIBRARIES):
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=str(root)))
    try:
        _compile(cc, tmp)
        if force and final.exists():
            shutil.rmtree(str(final), ignore_errors=True)
        try:
            os.rename(str(tmp), str(final))  # atomic: parallel sessions race safely
        except OSError:
            if not all((final / soname).is_file() for soname in LIBRARIES):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(str(tmp), ignore_errors=True)
    return final


if __name__ == "__main__":
    print(build_libs(force="--force" in sys.argv))
