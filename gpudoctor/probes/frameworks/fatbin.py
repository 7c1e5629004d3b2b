"""Which GPU architectures a CUDA library carries code for, read from its fat binaries.

nvcc embeds every kernel as a fat binary in the `.nv_fatbin` section of the ELF file: a chain of
blobs (header: magic 0xBA55ED50, version, header size, payload size), each a list of entries with a
kind (1 = PTX, 2 = ELF cubin, i.e. SASS) and the SM number it was built for (35, 80, 90, ...).
That is exactly what decides "no kernel image is available for execution on the device", whatever
the framework's version string says, so it is read from the artifact that is installed.

Only headers are read: the ELF header, the section header table, the section names, then one
64-byte header per fatbin entry, skipping each payload with a seek. libtorch_cuda.so is close to
a gigabyte; a read costs milliseconds and is bounded by a deadline and an entry budget.
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field
from typing import BinaryIO, List, Optional, Set, Tuple

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_SASS = 1, 2
_BLOB_HEADER = struct.Struct("<IHHQ")  # magic, version, header size, payload size
_ENTRY_HEADER = struct.Struct("<HHIQ")  # kind, version, header size, payload size (arch at +28)
MAX_ENTRIES = 200_000
DEADLINE_S = 2.0


@dataclass
class FatbinArchs:
    """The compute capabilities a library's fat binaries cover."""

    path: str
    sass: List[str] = field(default_factory=list)  # "3.7", "8.0": cubins (machine code)
    ptx: List[str] = field(default_factory=list)  # PTX that the driver can JIT for newer GPUs
    entries: int = 0
    complete: bool = True  # False: the deadline or the entry budget stopped the walk
    error: Optional[str] = None  # not an ELF file, no .nv_fatbin, a broken header

    def arch_list(self) -> List[str]:
        """nvcc spellings, the ones torch.cuda.get_arch_list() prints: sm_37, compute_80."""
        return [f"sm_{_digits(cc)}" for cc in self.sass] + [f"compute_{_digits(cc)}" for cc in self.ptx]


def _digits(cc: str) -> str:
    return cc.replace(".", "")


def _cc(arch: int) -> str:
    """SM number -> compute capability: 37 -> "3.7", 100 -> "10.0", 120 -> "12.0"."""
    return f"{arch // 10}.{arch % 10}"


def read_fatbin_archs(path: str, deadline_s: Optional[float] = None, max_entries: Optional[int] = None) -> FatbinArchs:
    """The SASS and PTX architectures in `path`'s .nv_fatbin section (never raises). The walk stops at
    `deadline_s` seconds or `max_entries` entries (module defaults), and then says it is incomplete."""
    result = FatbinArchs(path=path)
    deadline_s = DEADLINE_S if deadline_s is None else deadline_s
    max_entries = MAX_ENTRIES if max_entries is None else max_entries
    try:
        with open(path, "rb") as fh:
            section = _find_section(fh, b".nv_fatbin")
            if section is None:
                result.error = "no .nv_fatbin section (not a 64-bit ELF file, or no CUDA device code)"
                return result
            sass, ptx = _walk(fh, section, result, time.monotonic() + deadline_s, max_entries)
    except (OSError, struct.error, ValueError) as exc:
        result.error = f"cannot read {path}: {exc}"
        return result
    result.sass = sorted((_cc(a) for a in sass), key=cc_key)
    result.ptx = sorted((_cc(a) for a in ptx), key=cc_key)
    return result


def cc_key(cc: str) -> Tuple[int, int]:
    major, minor = cc.split(".")
    return int(major), int(minor)


def _find_section(fh: BinaryIO, name: bytes) -> Optional[Tuple[int, int]]:
    """(file offset, size) of a section of a 64-bit little-endian ELF file, from its section table."""
    ident = fh.read(64)
    if len(ident) < 64 or ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", ident, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ident, 0x3A)
    if not shoff or shentsize < 64 or shnum == 0 or shstrndx >= shnum:
        return None  # stripped of its section table: nothing to read without the whole file
    fh.seek(shoff)
    table = fh.read(shentsize * shnum)
    headers = [struct.unpack_from("<IIQQQQ", table, i * shentsize) for i in range(len(table) // shentsize)]
    if shstrndx >= len(headers):
        return None
    _n, _t, _f, _a, str_off, str_size = headers[shstrndx]
    fh.seek(str_off)
    names = fh.read(min(str_size, 1 << 20))
    for sh_name, sh_type, _flags, _addr, offset, size in headers:
        end = names.find(b"\0", sh_name)
        if names[sh_name:end if end >= 0 else None] == name and sh_type != 8:  # 8: SHT_NOBITS
            return offset, size
    return None


def _walk(fh: BinaryIO, section: Tuple[int, int], result: FatbinArchs, deadline: float,
          max_entries: int) -> Tuple[Set[int], Set[int]]:
    start, size = section
    end = start + size
    sass: Set[int] = set()
    ptx: Set[int] = set()
    pos = start
    while pos + _BLOB_HEADER.size <= end:
        fh.seek(pos)
        head = fh.read(_BLOB_HEADER.size)
        if len(head) < _BLOB_HEADER.size:
            break
        magic, _version, header_size, fat_size = _BLOB_HEADER.unpack(head)
        if magic != FATBIN_MAGIC or header_size < _BLOB_HEADER.size:
            pos = _next_blob(fh, pos + 8, end)  # padding between blobs: look for the next header
            if pos is None:
                break
            continue
        blob_end = min(pos + header_size + fat_size, end)
        if not _walk_entries(fh, pos + header_size, blob_end, sass, ptx, result, deadline, max_entries):
            result.complete = False
            break
        pos = blob_end + (-blob_end % 8)
    return sass, ptx


def _walk_entries(fh: BinaryIO, pos: int, blob_end: int, sass: Set[int], ptx: Set[int], result: FatbinArchs,
                  deadline: float, max_entries: int) -> bool:
    """Record each entry's kind and arch; False when the budget ran out."""
    while pos + 32 <= blob_end:
        if result.entries >= max_entries or time.monotonic() > deadline:
            return False
        fh.seek(pos)
        head = fh.read(32)
        if len(head) < 32:
            return True
        kind, _version, header_size, payload = _ENTRY_HEADER.unpack_from(head)
        arch, = struct.unpack_from("<I", head, 28)
        if header_size < 32 or kind not in (KIND_PTX, KIND_SASS):
            return True  # not an entry header: the rest of this blob is unreadable, go on with the next
        result.entries += 1
        if 10 <= arch < 1000:
            (ptx if kind == KIND_PTX else sass).add(arch)
        pos += header_size + payload
    return True


def _next_blob(fh: BinaryIO, pos: int, end: int, window: int = 1 << 16) -> Optional[int]:
    """The next 8-byte-aligned fatbin header at or after `pos`, searched in one bounded window."""
    pos += -pos % 8
    fh.seek(pos)
    data = fh.read(min(window, max(0, end - pos)))
    needle = struct.pack("<I", FATBIN_MAGIC)
    found = data.find(needle)
    while found >= 0 and found % 8:
        found = data.find(needle, found + 1)
    return None if found < 0 else pos + found


# Where each framework keeps its device code, relative to its package folder (first found wins per
# pattern). torch 1.9-1.13 split libtorch_cuda.so into _cu/_cpp; TF's kernels are in its pywrap
# libraries (libtensorflow_cc.so.2 in 2.x wheels); JAX's in jaxlib's xla_extension (0.4.x CUDA wheels) or the CUDA PJRT plugin.
ARTIFACTS = {
    "torch": ("lib/libtorch_cuda.so", "lib/libtorch_cuda_cu.so"),
    "tensorflow": ("libtensorflow_cc.so.2", "libtensorflow_framework.so.2", "python/_pywrap_tensorflow_internal.so"),
    "jax": ("../jaxlib/xla_extension.so", "../jax_plugins/xla_cuda12/xla_cuda_plugin.so",
            "../jax_plugins/xla_cuda13/xla_cuda_plugin.so", "../jax_plugins/xla_cuda11/xla_cuda_plugin.so"),
    "cupy": ("cuda/cub.so", "_core/_routines_linalg.so"),
}


def framework_archs(name: str, package_dir: Optional[str], deadline_s: Optional[float] = None) -> Optional[FatbinArchs]:
    """The fat binary architectures of a framework's main CUDA library, when one is installed.
    Extension modules carry an ABI tag (cub.cpython-311-x86_64-linux-gnu.so): matched by prefix."""
    import glob
    import os

    if not package_dir:
        return None
    for pattern in ARTIFACTS.get(name, ()):
        stem, ext = os.path.splitext(os.path.normpath(os.path.join(package_dir, pattern)))
        for path in [stem + ext] + sorted(glob.glob(glob.escape(stem) + ".*" + ext)):
            if os.path.isfile(path):
                archs = read_fatbin_archs(path, deadline_s)
                if archs.error is None and (archs.sass or archs.ptx):
                    return archs
    return None
