"""Read an ELF shared object's layout and dynamic section without loading it.

torch links its CUDA libraries (libcudart.so.12, libcudnn.so.9, ...) as DT_NEEDED entries of
torch/lib/libtorch_cuda.so and friends, so the dynamic section is the exact list of sonames a
given build will load, whatever the version. Files are mapped, never read whole, and only the
headers and the dynamic section are touched: libtorch_cuda.so is close to a gigabyte.
elf_symbols.py reads the symbol tables through the same layout.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 15, 29
# A broken file raises these while it is parsed; callers answer None (no reading) instead.
PARSE_ERRORS = (struct.error, ValueError, IndexError, OverflowError)

Segment = Tuple[int, int, int]  # a PT_LOAD segment: (vaddr, offset, filesz)


@dataclass
class ElfDynamic:
    needed: List[str] = field(default_factory=list)
    runpath: List[str] = field(default_factory=list)  # RUNPATH, or RPATH when there is no RUNPATH


@dataclass(frozen=True)
class ElfHeader:
    phoff: int
    phentsize: int
    phnum: int
    shoff: int
    shentsize: int
    shnum: int


def open_elf(path: str) -> Optional[mmap.mmap]:
    """The file mapped read-only, or None when it cannot be opened or is too short to be ELF."""
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size < 64:
                return None
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def header(mm: mmap.mmap) -> Optional[ElfHeader]:
    """The header of a 64-bit little-endian ELF file (every Linux wheel gpudoctor cares about is), else None."""
    if len(mm) < 64 or mm[:4] != b"\x7fELF" or mm[4] != 2 or mm[5] != 1:
        return None
    phoff, shoff = struct.unpack_from("<QQ", mm, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", mm, 0x36)
    return ElfHeader(phoff, phentsize, phnum, shoff, shentsize, shnum)


def layout(mm: mmap.mmap, head: ElfHeader) -> Tuple[List[Segment], Optional[Tuple[int, int]]]:
    """The PT_LOAD segments and the (offset, size) of the dynamic section, from the program headers."""
    loads: List[Segment] = []
    dynamic: Optional[Tuple[int, int]] = None
    for i in range(head.phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(
            "<IIQQQQ", mm, head.phoff + i * head.phentsize)
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    return loads, dynamic


def dynamic_entries(mm: mmap.mmap, dynamic: Tuple[int, int]) -> List[Tuple[int, int]]:
    """The (tag, value) entries of the dynamic section, up to DT_NULL."""
    entries = []
    start, size = dynamic
    for off in range(start, start + size - 15, 16):
        tag, value = struct.unpack_from("<qQ", mm, off)
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    return entries


def file_offset(loads: Sequence[Segment], vaddr: int) -> Optional[int]:
    """The file offset of a virtual address, through the PT_LOAD segments (vaddr, offset, filesz)."""
    for seg_vaddr, seg_offset, seg_size in loads:
        if seg_vaddr <= vaddr < seg_vaddr + seg_size:
            return seg_offset + (vaddr - seg_vaddr)
    return None


def read_dynamic(path: str) -> Optional[ElfDynamic]:
    """The dynamic section of a 64-bit little-endian ELF file, or None if it is not one."""
    mm = open_elf(path)
    if mm is None:
        return None
    try:
        return _read(mm)
    except PARSE_ERRORS:
        return None
    finally:
        mm.close()


def _read(mm: mmap.mmap) -> Optional[ElfDynamic]:
    head = header(mm)
    if head is None:
        return None
    loads, dynamic = layout(mm, head)
    if dynamic is None:
        return ElfDynamic()
    entries = dynamic_entries(mm, dynamic)
    strtab = next((v for t, v in entries if t == DT_STRTAB), None)
    strsz = next((v for t, v in entries if t == DT_STRSZ), 0)
    if strtab is None:
        return ElfDynamic()
    table_offset = file_offset(loads, strtab)
    if table_offset is None:
        return None
    strings = mm[table_offset:table_offset + strsz]

    def string_at(index: int) -> str:
        end = strings.find(b"\0", index)
        return strings[index:end if end >= 0 else None].decode("utf-8", "replace")

    result = ElfDynamic(needed=[string_at(v) for t, v in entries if t == DT_NEEDED])
    runpath = [string_at(v) for t, v in entries if t == DT_RUNPATH] or \
        [string_at(v) for t, v in entries if t == DT_RPATH]
    result.runpath = [p for item in runpath for p in item.split(":") if p]
    return result
