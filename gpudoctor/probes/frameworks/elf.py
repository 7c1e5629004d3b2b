"""Read DT_NEEDED and RUNPATH/RPATH from an ELF shared object without loading it.

torch links its CUDA libraries (libcudart.so.12, libcudnn.so.9, ...) as DT_NEEDED entries of
torch/lib/libtorch_cuda.so and friends, so the dynamic section is the exact list of sonames a
given build will load, whatever the version. Only the headers and the dynamic section are read:
libtorch_cuda.so is close to a gigabyte.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import BinaryIO, List, Optional, Sequence, Tuple

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 15, 29


@dataclass
class ElfDynamic:
    needed: List[str] = field(default_factory=list)
    runpath: List[str] = field(default_factory=list)  # RUNPATH, or RPATH when there is no RUNPATH


def read_dynamic(path: str) -> Optional[ElfDynamic]:
    """The dynamic section of a 64-bit little-endian ELF file, or None if it is not one."""
    try:
        with open(path, "rb") as fh:
            return _read(fh)
    except (OSError, struct.error, ValueError):
        return None


def _read(fh: BinaryIO) -> Optional[ElfDynamic]:
    ident = fh.read(64)
    if len(ident) < 64 or ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
        return None  # not ELF64 little-endian (every Linux wheel gpudoctor cares about is)
    phoff, = struct.unpack_from("<Q", ident, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", ident, 0x36)
    fh.seek(phoff)
    table = fh.read(phentsize * phnum)
    loads: List[Tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    dynamic: Optional[Tuple[int, int]] = None
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return ElfDynamic()
    fh.seek(dynamic[0])
    raw = fh.read(dynamic[1])
    entries = []
    for off in range(0, len(raw) - 15, 16):
        tag, value = struct.unpack_from("<qQ", raw, off)
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    strtab = next((v for t, v in entries if t == DT_STRTAB), None)
    strsz = next((v for t, v in entries if t == DT_STRSZ), 0)
    if strtab is None:
        return ElfDynamic()
    table_offset = file_offset(loads, strtab)
    if table_offset is None:
        return None
    fh.seek(table_offset)
    strings = fh.read(strsz)

    def string_at(index: int) -> str:
        end = strings.find(b"\0", index)
        return strings[index:end if end >= 0 else None].decode("utf-8", "replace")

    result = ElfDynamic(needed=[string_at(v) for t, v in entries if t == DT_NEEDED])
    runpath = [string_at(v) for t, v in entries if t == DT_RUNPATH] or \
        [string_at(v) for t, v in entries if t == DT_RPATH]
    result.runpath = [p for item in runpath for p in item.split(":") if p]
    return result


def file_offset(loads: Sequence[Tuple[int, int, int]], vaddr: int) -> Optional[int]:
    """The file offset of a virtual address, through the PT_LOAD segments (vaddr, offset, filesz)."""
    for seg_vaddr, seg_offset, seg_size in loads:
        if seg_vaddr <= vaddr < seg_vaddr + seg_size:
            return seg_offset + (vaddr - seg_vaddr)
    return None
