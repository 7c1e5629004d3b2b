"""What a released wheel says about itself: METADATA (Requires-Python, Requires-Dist), torch's
version.py, TensorFlow's build_info.py, and the arch list of a CUDA library inside it. Pure parsing
plus the reads through wheel_range/fatbin; every read is counted by the fetcher."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Tuple

from . import fatbin
from .wheel_range import Fetch, Member, data_offset, member_range, read_member


@dataclass
class Metadata:
    name: str = ""
    version: str = ""
    requires_python: str = ""
    requires_dist: List[str] = field(default_factory=list)


def parse_metadata(text: str) -> Metadata:
    """The header fields of a METADATA file (RFC 822 style; the body after the blank line is skipped)."""
    md = Metadata()
    for line in text.split("\n\n", 1)[0].splitlines():
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "Name":
            md.name = value
        elif key == "Version":
            md.version = value
        elif key == "Requires-Python":
            md.requires_python = value
        elif key == "Requires-Dist":
            md.requires_dist.append(value)
    return md


_REQ = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(\[[^\]]*\])?\s*\(?\s*([^;()]*?)\s*\)?\s*(;.*)?$")


def requirement(spec: str) -> Tuple[str, str, str]:
    """"nvidia-cudnn-cu12==9.1.0.70; platform_system == 'Linux'" -> (name, version spec, marker)."""
    m = _REQ.match(spec)
    if not m:
        return spec.strip(), "", ""
    return m.group(1).lower(), m.group(3).replace(" ", ""), (m.group(4) or "").lstrip("; ").strip()


def pins(md: Metadata, extra: Optional[str] = None) -> Dict[str, str]:
    """name -> version specifier of the Requires-Dist lines (of one extra, or without any extra)."""
    out: Dict[str, str] = {}
    for spec in md.requires_dist:
        name, version, marker = requirement(spec)
        in_extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        if (in_extra.group(1) if in_extra else None) == extra:
            out[name] = version
    return out


def exact_pin(spec: str) -> Optional[str]:
    """"==12.4.127" -> "12.4.127"; a range or anything else -> None."""
    m = re.fullmatch(r"==(\d+(?:\.\d+)*)", spec or "")
    return m.group(1) if m else None


def python_assignments(source: str) -> Dict[str, str]:
    """`name = 'value'` lines of a generated file such as torch/version.py or build_info.py."""
    out = {}
    for m in re.finditer(r"^(\w+)\s*(?::\s*[\w\[\], ]+)?=\s*['\"]([^'\"]*)['\"]", source, re.M):
        out[m.group(1)] = m.group(2)
    return out


def member_text(fetch: Fetch, members: Dict[str, Member], suffix: str) -> Optional[str]:
    hits = [m for name, m in members.items() if name.endswith(suffix)]
    if not hits:
        return None
    return read_member(fetch, min(hits, key=lambda m: len(m.name))).decode("utf-8", "replace")


def _inflate_chunks(fetch: Fetch, start: int, size: int, chunk: int) -> Iterator[bytes]:
    d = zlib.decompressobj(-15)
    for off in range(0, size, chunk):
        out = d.decompress(fetch(start + off, min(chunk, size - off)))
        if out:
            yield out
        if d.eof:
            return


def library_archs(fetch: Fetch, member: Member, chunk: int = 8 << 20,
                  max_containers: int = 64) -> fatbin.FatbinArchs:
    """Arch list of a CUDA .so inside a wheel: headers only when the member is stored; when it is
    deflated, its compressed bytes are streamed (chunk by chunk, nothing kept) until enough fatbin
    containers have passed."""
    rng = member_range(fetch, member)
    if rng is not None:
        found = fatbin.archs_from_elf(rng)
        return found if found is not None else fatbin.FatbinArchs()
    return fatbin.archs_from_stream(_inflate_chunks(fetch, data_offset(fetch, member), member.compressed_size, chunk),
                                    max_containers=max_containers)
