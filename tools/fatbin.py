"""The GPU architectures a CUDA shared library carries, read from its fat-binary headers only.

Layout (NVIDIA does not document it; it is the one every fatbin reader uses): the `.nv_fatbin`
ELF section holds containers, each a 16-byte header `<IHHQ` (magic 0xBA55ED50, version 1, header
size 16, size of the entries that follow), then entries, each with a header `<HHIQ` (kind: 1 PTX,
2 SASS/ELF; version 0x0101; header size; padded payload size) and the SM number (80 = sm_80) as a
u32 at offset 28. The next entry starts at entry + header size + padded payload size.

Two ways in, neither reading the payloads into memory:
- random access (a local file, or a wheel member stored uncompressed): ELF header -> section
  table -> `.nv_fatbin` -> headers only;
- a stream (a member deflated in the wheel, which cannot be entered in the middle): scan the
  decompressed bytes for container headers as they pass and stop after enough containers.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, List, Optional, Set, Tuple

FATBIN_MAGIC = 0xBA55ED50
MAGIC_BYTES = struct.pack("<I", FATBIN_MAGIC)
KIND_PTX, KIND_SASS = 1, 2
CONTAINER_HEADER = struct.Struct("<IHHQ")
ENTRY_HEADER = struct.Struct("<HHIQ")
ENTRY_ARCH_AT = 28

Read = Callable[[int, int], bytes]


@dataclass
class FatbinArchs:
    """What the headers said: in how many containers each SM number has SASS and PTX."""

    sass_in: Counter = field(default_factory=Counter)
    ptx_in: Counter = field(default_factory=Counter)
    containers: int = 0

    @property
    def sass(self) -> Set[int]:
        return set(self.sass_in)

    @property
    def ptx(self) -> Set[int]:
        return set(self.ptx_in)

    def _common(self, counts: Counter) -> Set[int]:
        return {sm for sm, n in counts.items() if 2 * n >= self.containers}

    def arch_list(self) -> List[str]:
        """The build's TORCH_CUDA_ARCH_LIST, in its spelling ("8.0", "12.0+PTX"): the archs found in at
        least half of the containers read. Every ordinary kernel file is compiled for that list; a few
        special kernels add archs of their own (sm_89 FP8, sm_103 ...), reported by `extra()`.
        Arch-specific SASS such as sm_90a shows as plain 9.0: the header field is the number."""
        sass, ptx = self._common(self.sass_in), self._common(self.ptx_in)
        return [f"{sm // 10}.{sm % 10}" + ("+PTX" if sm in ptx else "") for sm in sorted(sass | ptx)]

    def extra(self) -> List[int]:
        """SM numbers present only in a minority of containers (special kernels)."""
        return sorted((self.sass | self.ptx) - self._common(self.sass_in) - self._common(self.ptx_in))


def _entries(read: Read, start: int, size: int, found: FatbinArchs) -> None:
    sass: Set[int] = set()
    ptx: Set[int] = set()
    _walk(read, start, size, sass, ptx)
    found.sass_in.update(sass)
    found.ptx_in.update(ptx)


def _walk(read: Read, start: int, size: int, sass: Set[int], ptx: Set[int]) -> None:
    pos, end = start, start + size
    while pos + 32 <= end:
        head = read(pos, 32)
        if len(head) < 32:
            return
        kind, _version, header_size, padded = ENTRY_HEADER.unpack_from(head)
        if kind not in (KIND_PTX, KIND_SASS) or header_size < 32:
            return  # not an entry header: stop rather than guess
        sm, = struct.unpack_from("<I", head, ENTRY_ARCH_AT)
        (ptx if kind == KIND_PTX else sass).add(sm)
        pos += header_size + padded


def elf_section(read: Read, name: bytes = b".nv_fatbin") -> Optional[Tuple[int, int]]:
    """(offset, size) of a section of a little-endian ELF64 file, from its header and section table."""
    head = read(0, 64)
    if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", head, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
    if not shoff or shentsize < 64 or shstrndx >= shnum:
        return None
    table = read(shoff, shentsize * shnum)
    sections = [struct.unpack_from("<IIQQQQ", table, i * shentsize) for i in range(shnum)]
    _n, _t, _f, _a, str_off, str_size = sections[shstrndx]
    names = read(str_off, str_size)
    for name_at, _type, _flags, _addr, offset, size in sections:
        if names[name_at:names.find(b"\0", name_at)] == name:
            return offset, size
    return None


def archs_from_elf(read: Read, max_containers: int = 64) -> Optional[FatbinArchs]:
    """Random access: the archs of the first `max_containers` containers of `.nv_fatbin` (every
    translation unit of a library is built with the same arch flags, so a few containers tell the
    list). None when the file has no `.nv_fatbin`."""
    where = elf_section(read)
    if where is None:
        return None
    offset, size = where
    found = FatbinArchs()
    pos, end = offset, offset + size
    while pos + 16 <= end and found.containers < max_containers:
        magic, _v, header_size, fat_size = CONTAINER_HEADER.unpack(read(pos, 16))
        if magic != FATBIN_MAGIC:
            break
        _entries(read, pos + header_size, fat_size, found)
        found.containers += 1
        pos += header_size + fat_size
        pos += -pos % 8  # containers are 8-byte aligned
    return found


def archs_from_stream(chunks: Iterable[bytes], max_containers: int = 64,
                      window: int = 1 << 20) -> FatbinArchs:
    """Scan a decompressed byte stream for fatbin containers (8-byte aligned magic with version 1
    and a 16-byte header) and read their entry headers; stop after `max_containers`. Holds at most
    one container's bytes plus `window` in memory."""
    found = FatbinArchs()
    buf, base = b"", 0  # buf holds the stream from absolute offset `base`
    for chunk in chunks:
        buf += chunk
        i = 0
        while True:
            j = buf.find(MAGIC_BYTES, i)
            if j < 0 or j + 16 > len(buf):
                break
            if (base + j) % 8:
                i = j + 1
                continue
            _m, version, header_size, fat_size = CONTAINER_HEADER.unpack_from(buf, j)
            if version != 1 or header_size != 16 or fat_size > (1 << 31):
                i = j + 1
                continue
            if j + header_size + fat_size > len(buf):
                break  # wait for the rest of this container
            view = buf
            _entries(lambda o, n: view[o:o + n], j + header_size, fat_size, found)
            found.containers += 1
            if found.containers >= max_containers:
                return found
            i = j + header_size + fat_size
        keep = max(i, len(buf) - window) if i else max(0, len(buf) - window)
        keep = min(keep, len(buf))
        j = buf.find(MAGIC_BYTES, i) if i < len(buf) else -1
        if j >= 0:
            keep = min(keep, j)  # never drop a container that is still arriving
        base += keep
        buf = buf[keep:]
    return found
