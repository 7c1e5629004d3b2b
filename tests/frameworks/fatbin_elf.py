"""Build small ELF shared objects with a real-layout .nv_fatbin section, for the fat binary reader.

Layout as nvcc writes it (and as libcublas.so.11 from Debian's libcublas11 shows it): each blob is a
16-byte header (magic 0xBA55ED50, version 1, header size 16, payload size) followed by entries with a
64-byte header: kind (1 PTX, 2 ELF/SASS), version 0x0101, header size, payload size, compressed size,
options, minor/major of the format, the SM number, name offset/length, flags, zero, decompressed size.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterable, List, Sequence, Tuple

PTX, SASS = 1, 2


def fatbin_entry(kind: int, arch: int, payload: bytes = b"\0" * 24) -> bytes:
    payload += b"\0" * (-len(payload) % 8)
    header = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, len(payload), len(payload), 0, 7, 1, arch, 0, 0,
                         0x2011, 0, len(payload))
    return header + payload


def fatbin_blob(entries: Iterable[Tuple[int, int]]) -> bytes:
    body = b"".join(fatbin_entry(kind, arch) for kind, arch in entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def elf_with_sections(sections: Sequence[Tuple[str, bytes]]) -> bytes:
    """A 64-bit little-endian ELF shared object holding `sections` (name, bytes) and .shstrtab."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n, _ in sections) + b".shstrtab\0"
    body = bytearray(b"\0" * 64)
    offsets: List[Tuple[int, int, int]] = []  # (name index, offset, size)
    name_index = 1
    for name, data in sections:
        body += b"\0" * (-len(body) % 8)
        offsets.append((name_index, len(body), len(data)))
        body += data
        name_index += len(name) + 1
    shstr_off = len(body)
    body += names
    body += b"\0" * (-len(body) % 8)
    shoff = len(body)
    table = b"\0" * 64  # section 0: SHN_UNDEF
    for index, offset, size in offsets:
        table += struct.pack("<IIQQQQIIQQ", index, 1, 2, 0, offset, size, 0, 0, 8, 0)  # PROGBITS, SHF_ALLOC
    table += struct.pack("<IIQQQQIIQQ", name_index, 3, 0, 0, shstr_off, len(names), 0, 0, 1, 0)  # STRTAB
    shnum = len(offsets) + 2
    header = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    header += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 56, 0, 64, shnum, shnum - 1)
    body[:64] = header
    return bytes(body) + table


def write_cuda_library(path: Path, sass: Sequence[int], ptx: Sequence[int] = (), blobs: int = 2) -> Path:
    """A shared object whose .nv_fatbin carries SASS for `sass` and PTX for `ptx` (SM numbers), split
    over `blobs` compilation units the way a real library is."""
    entries = [(SASS, a) for a in sass] + [(PTX, a) for a in ptx]
    data = b"".join(fatbin_blob(entries) for _ in range(blobs))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(elf_with_sections([(".text", b"\x90" * 32), (".nv_fatbin", data)]))
    return path


def elf_with_needed(needed: Sequence[str], runpath: str = "") -> bytes:
    """A 64-bit ELF shared object with a dynamic section: DT_NEEDED entries and a RUNPATH, mapped by one
    PT_LOAD segment whose addresses equal file offsets (what elf.read_dynamic follows)."""
    strings = b"\0"
    offsets = []
    for name in list(needed) + ([runpath] if runpath else []):
        offsets.append(len(strings))
        strings += name.encode() + b"\0"
    phoff, phnum = 64, 2
    strtab_off = phoff + 56 * phnum
    dyn_off = strtab_off + len(strings) + (-(strtab_off + len(strings)) % 8)
    entries = [(1, o) for o in offsets[:len(needed)]]
    if runpath:
        entries.append((29, offsets[-1]))
    entries += [(5, strtab_off), (10, len(strings)), (0, 0)]
    dynamic = b"".join(struct.pack("<qQ", t, v) for t, v in entries)
    total = dyn_off + len(dynamic)
    header = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    header += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, phoff, 0, 0, 64, 56, phnum, 64, 0, 0)
    load = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, total, total, 0x1000)
    dyn = struct.pack("<IIQQQQQQ", 2, 6, dyn_off, dyn_off, dyn_off, len(dynamic), len(dynamic), 8)
    body = header + load + dyn + strings
    body += b"\0" * (dyn_off - len(body))
    return body + dynamic
