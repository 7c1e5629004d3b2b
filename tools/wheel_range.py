"""Read single members of a remote wheel with HTTP range requests, never the whole file.

A wheel is a zip: its central directory sits at the end, so one request for the tail finds every
member's offset, size and compression, and one request per wanted member fetches just its bytes.
Standard library only (the refresh script adds no dependency).
"""

from __future__ import annotations

import struct
import urllib.request
import zlib
from dataclasses import dataclass
from typing import Callable, Dict, Optional

EOCD_SIG = b"PK\x05\x06"
ZIP64_LOCATOR_SIG = b"PK\x06\x07"
CENTRAL_SIG = b"PK\x01\x02"
LOCAL_SIG = b"PK\x03\x04"
TAIL = 64 * 1024  # end of central directory + comment fit; a wheel's directory is usually within it


class WheelReadError(Exception):
    """The wheel could not be read as a zip (bad range answer, not a zip, unsupported compression)."""


# fetch(offset, length) -> bytes: an HTTP range request in real use, a slice of saved bytes in tests.
Fetch = Callable[[int, int], bytes]


class HttpRange:
    """Range requests against one URL; counts the bytes it downloaded and the requests it made."""

    def __init__(self, url: str, size: int, timeout: float = 60.0,
                 opener: Callable[..., object] = urllib.request.urlopen) -> None:
        self.url, self.size, self.timeout, self._open = url, size, timeout, opener
        self.downloaded = 0
        self.requests = 0

    def __call__(self, offset: int, length: int) -> bytes:
        if length <= 0:
            return b""
        end = min(offset + length, self.size) - 1
        req = urllib.request.Request(self.url, headers={"Range": f"bytes={offset}-{end}"})
        with self._open(req, timeout=self.timeout) as resp:  # type: ignore[attr-defined]
            if getattr(resp, "status", 206) != 206:
                raise WheelReadError(f"{self.url}: the server ignored the range request (status {resp.status})")
            data = resp.read()
        self.requests += 1
        self.downloaded += len(data)
        return data


@dataclass(frozen=True)
class Member:
    name: str
    method: int  # 0 stored, 8 deflate
    compressed_size: int
    size: int
    local_offset: int


def _zip64_extra(extra: bytes, size: int, csize: int, offset: int):
    """Fill the 0xFFFFFFFF fields of a central record from its zip64 extra field."""
    i = 0
    while i + 4 <= len(extra):
        tag, n = struct.unpack_from("<HH", extra, i)
        if tag == 1:
            vals = list(struct.unpack_from("<%dQ" % (n // 8), extra, i + 4))
            if size == 0xFFFFFFFF and vals:
                size = vals.pop(0)
            if csize == 0xFFFFFFFF and vals:
                csize = vals.pop(0)
            if offset == 0xFFFFFFFF and vals:
                offset = vals.pop(0)
            break
        i += 4 + n
    return size, csize, offset


def central_directory(fetch: Fetch, total: int) -> Dict[str, Member]:
    """Every member of the zip, from its central directory (two requests at most)."""
    tail_start = max(0, total - TAIL)
    tail = fetch(tail_start, total - tail_start)
    at = tail.rfind(EOCD_SIG)
    if at < 0:
        raise WheelReadError("no end-of-central-directory record in the last 64 KiB: not a zip")
    cd_size, cd_offset = struct.unpack_from("<II", tail, at + 12)
    loc = tail.rfind(ZIP64_LOCATOR_SIG, 0, at)
    if (cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF) and loc >= 0:
        eocd64 = struct.unpack_from("<Q", tail, loc + 8)[0]
        rec = tail[eocd64 - tail_start:] if eocd64 >= tail_start else fetch(eocd64, 56)
        cd_size, cd_offset = struct.unpack_from("<QQ", rec, 40)
    if cd_offset >= tail_start:
        cd = tail[cd_offset - tail_start:cd_offset - tail_start + cd_size]
    else:
        cd = fetch(cd_offset, cd_size)
    members: Dict[str, Member] = {}
    i = 0
    while i + 46 <= len(cd) and cd[i:i + 4] == CENTRAL_SIG:
        method, = struct.unpack_from("<H", cd, i + 10)
        csize, size = struct.unpack_from("<II", cd, i + 20)
        nlen, xlen, clen = struct.unpack_from("<HHH", cd, i + 28)
        offset, = struct.unpack_from("<I", cd, i + 42)
        name = cd[i + 46:i + 46 + nlen].decode("utf-8", "replace")
        extra = cd[i + 46 + nlen:i + 46 + nlen + xlen]
        size, csize, offset = _zip64_extra(extra, size, csize, offset)
        members[name] = Member(name, method, csize, size, offset)
        i += 46 + nlen + xlen + clen
    if not members:
        raise WheelReadError("empty or unreadable central directory")
    return members


def data_offset(fetch: Fetch, member: Member) -> int:
    """Where a member's (compressed) bytes start: after its local header, whose name and extra
    lengths may differ from the central record's."""
    head = fetch(member.local_offset, 30)
    if head[:4] != LOCAL_SIG:
        raise WheelReadError(f"{member.name}: no local header at offset {member.local_offset}")
    nlen, xlen = struct.unpack_from("<HH", head, 26)
    return member.local_offset + 30 + nlen + xlen


def read_member(fetch: Fetch, member: Member, limit: int = 4 * 1024 * 1024) -> bytes:
    """A small member's content (METADATA, version.py, build_info.py). Refuses members over `limit`."""
    if member.compressed_size > limit:
        raise WheelReadError(f"{member.name}: {member.compressed_size} bytes is more than this script reads")
    raw = fetch(data_offset(fetch, member), member.compressed_size)
    if member.method == 0:
        return raw
    if member.method == 8:
        return zlib.decompress(raw, -15)
    raise WheelReadError(f"{member.name}: compression method {member.method} is not supported")


class MemberRange:
    """Random access into one STORED member (offsets relative to the member's start); None when the
    member is compressed, since deflate cannot be entered in the middle."""

    def __init__(self, fetch: Fetch, start: int, size: int) -> None:
        self._fetch, self.start, self.size = fetch, start, size

    def __call__(self, offset: int, length: int) -> bytes:
        length = max(0, min(length, self.size - offset))
        return self._fetch(self.start + offset, length)


def member_range(fetch: Fetch, member: Member) -> Optional[MemberRange]:
    if member.method != 0:
        return None
    return MemberRange(fetch, data_offset(fetch, member), member.size)
