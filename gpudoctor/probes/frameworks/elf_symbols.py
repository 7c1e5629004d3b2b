"""Which of torch's C++ symbols a compiled extension needs, and whether the installed torch defines them.

An extension built against one torch release (flash-attn compiled from source, then torch upgraded;
a torchvision wheel for another torch) needs symbols such as `_ZN3c104cuda9SetDeviceEi` that another
release no longer exports, and its import fails with "undefined symbol: ...". The extension's own
dynamic symbol table lists what it needs. torch's libraries answer through their GNU hash tables, so
only their headers, a few hash buckets and the names compared are read: libtorch_cpu.so is hundreds of
megabytes and is never read whole (it is mapped, and only the pages looked at are touched).
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from typing import List, Optional, Sequence, Tuple

from .elf import DT_STRTAB, PARSE_ERRORS, dynamic_entries, file_offset, header, layout, open_elf

SHT_DYNSYM = 11
SHN_UNDEF = 0
STB_WEAK = 2
SYMBOL_SIZE = 24  # Elf64_Sym
DT_SYMTAB, DT_GNU_HASH = 6, 0x6FFFFEF5
MAX_SYMBOLS = 200_000  # an extension's table is a few thousand entries; this bounds a corrupt one
# Mangled names in torch's own namespaces (c10, at, torch, caffe2), functions and vtables/typeinfo:
# _ZN3c104cuda9SetDeviceEi, _ZNK2at10TensorBase8data_ptrEv, _ZTVN5torch8autograd4NodeE.
TORCH_SYMBOL = re.compile(rb"_Z(?:T[VIS])?N[KVr]*(?:3c10|2at|5torch|6caffe2)[0-9A-Z_]")
# torch's own shared libraries in torch/lib: the ones that export those namespaces.
TORCH_LIBRARY = re.compile(r"^lib(?:c10|torch|caffe2|shm)\w*\.so$")


def _name_at(mm: mmap.mmap, offset: int, limit: int = 4096) -> bytes:
    end = mm.find(b"\0", offset, offset + limit)
    return mm[offset:end if end >= 0 else offset + limit]


def undefined_torch_symbols(path: str) -> Optional[List[str]]:
    """The strong undefined dynamic symbols of `path` that name something of torch's, or None when the
    file is not a readable ELF64 shared object with a dynamic symbol table."""
    mm = open_elf(path)
    if mm is None:
        return None
    try:
        return _undefined(mm)
    except PARSE_ERRORS:
        return None
    finally:
        mm.close()


def _undefined(mm: mmap.mmap) -> Optional[List[str]]:
    head = header(mm)
    if head is None:
        return None
    sections = [struct.unpack_from("<IIQQQQIIQQ", mm, head.shoff + i * head.shentsize) for i in range(head.shnum)]
    dynsym = next((s for s in sections if s[1] == SHT_DYNSYM), None)
    if dynsym is None or dynsym[6] >= len(sections):
        return None
    offset, size, strtab = dynsym[4], dynsym[5], sections[dynsym[6]][4]
    out: List[str] = []
    for i in range(1, min(size // SYMBOL_SIZE, MAX_SYMBOLS)):
        st_name, st_info, _other, st_shndx = struct.unpack_from("<IBBH", mm, offset + i * SYMBOL_SIZE)
        if st_shndx != SHN_UNDEF or st_name == 0 or st_info >> 4 == STB_WEAK:
            continue
        name = _name_at(mm, strtab + st_name)
        if TORCH_SYMBOL.match(name):
            out.append(name.decode("ascii", "replace"))
    return out


def _gnu_hash(name: bytes) -> int:
    h = 5381
    for c in name:
        h = (h * 33 + c) & 0xFFFFFFFF
    return h


class ExportedSymbols:
    """The dynamic symbols one shared library defines, looked up through its GNU hash table."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._mm = open_elf(path)
        self._table: Optional[Tuple[int, ...]] = None
        if self._mm is not None:
            try:
                self._table = self._read_table(self._mm)
            except PARSE_ERRORS:
                self._table = None
        if self._table is None:
            self.close()

    @property
    def readable(self) -> bool:
        return self._table is not None

    def close(self) -> None:
        if self._mm is not None:
            self._mm.close()
            self._mm = None

    @staticmethod
    def _read_table(mm: mmap.mmap) -> Optional[Tuple[int, ...]]:
        head = header(mm)
        if head is None:
            return None
        loads, dynamic = layout(mm, head)
        if dynamic is None:
            return None
        wanted = {tag: file_offset(loads, value) for tag, value in dynamic_entries(mm, dynamic)
                  if tag in (DT_STRTAB, DT_SYMTAB, DT_GNU_HASH)}
        if None in wanted.values() or len(wanted) < 3:
            return None  # no GNU hash table (an old --hash-style=sysv link): no answer rather than a scan
        gnu = wanted[DT_GNU_HASH]
        nbuckets, symoffset, bloom_size, bloom_shift = struct.unpack_from("<IIII", mm, gnu)
        if nbuckets == 0 or bloom_size == 0:
            return None
        bloom = gnu + 16
        buckets = bloom + 8 * bloom_size
        chains = buckets + 4 * nbuckets
        return (wanted[DT_STRTAB], wanted[DT_SYMTAB], nbuckets, symoffset, bloom_size, bloom_shift, bloom, buckets,
                chains)

    def defines(self, name: str) -> bool:
        """Whether the library defines (exports) the symbol. False when it cannot be read."""
        if self._table is None or self._mm is None:
            return False
        try:
            return self._lookup(self._mm, self._table, name)
        except PARSE_ERRORS:  # a hash table pointing outside the file
            return False

    @staticmethod
    def _lookup(mm: mmap.mmap, table: Tuple[int, ...], name: str) -> bool:
        strtab, symtab, nbuckets, symoffset, bloom_size, bloom_shift, bloom, buckets, chains = table
        raw = name.encode("ascii", "replace")
        h = _gnu_hash(raw)
        word, = struct.unpack_from("<Q", mm, bloom + 8 * ((h // 64) % bloom_size))
        mask = (1 << (h % 64)) | (1 << ((h >> bloom_shift) % 64))
        if word & mask != mask:
            return False
        index, = struct.unpack_from("<I", mm, buckets + 4 * (h % nbuckets))
        if index < symoffset:
            return False
        for _ in range(MAX_SYMBOLS):
            chain_hash, = struct.unpack_from("<I", mm, chains + 4 * (index - symoffset))
            if (chain_hash | 1) == (h | 1):
                st_name, _info, _other, st_shndx = struct.unpack_from("<IBBH", mm, symtab + index * SYMBOL_SIZE)
                if st_shndx != SHN_UNDEF and mm[strtab + st_name:strtab + st_name + len(raw) + 1] == raw + b"\0":
                    return True
            if chain_hash & 1:
                return False
            index += 1
        return False


class TorchExports:
    """The symbols the installed torch's own libraries (torch/lib) export."""

    def __init__(self, torch_package_dir: Optional[str]) -> None:
        self.libraries: List[ExportedSymbols] = []
        lib_dir = os.path.join(torch_package_dir, "lib") if torch_package_dir else None
        try:
            names = sorted(os.listdir(lib_dir)) if lib_dir else []
        except OSError:
            names = []
        for name in names:
            if TORCH_LIBRARY.match(name):
                library = ExportedSymbols(os.path.join(lib_dir, name))
                if library.readable:
                    self.libraries.append(library)

    def __enter__(self) -> "TorchExports":
        return self

    def __exit__(self, *exc: object) -> None:
        for library in self.libraries:
            library.close()

    @property
    def readable(self) -> bool:
        # without libc10 and libtorch_cpu there is no telling what torch defines
        names = {os.path.basename(lib.path) for lib in self.libraries}
        return "libc10.so" in names and any(n.startswith("libtorch") for n in names)

    def missing(self, symbols: Sequence[str]) -> List[str]:
        return [s for s in symbols if not any(lib.defines(s) for lib in self.libraries)]
