"""Stream a log of any size and encoding into candidate lines, with flat memory.

A pasted log is untrusted text: any encoding, ANSI colours, Windows or old-Mac line ends,
progress bars redrawn with a bare carriage return, and sometimes megabytes without a newline.
The reader decodes bytes incrementally with errors="replace", strips ANSI escape sequences,
and caps every line, so that memory depends on the chunk size only.

Lines are numbered as grep, sed and editors number them: a line ends at "\n" ("\r\n" counts
once). A bare "\r" (a progress bar redrawn in place) does not end a line; it separates the
parts of one, and each part is matched on its own (candidate_parts).

This module is the pure-Python scanner: each decoded block is lowercased once and searched with
``str.find`` for every keyword, one pass per keyword. grep_filter.py does the same search with
the system's grep in one pass, and is used wherever a grep works; both give the same lines.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import BinaryIO, Dict, Iterable, Iterator, List, Optional, Tuple

CHUNK_BYTES = 1 << 20  # 1 MiB of input at a time
MAX_LINE_CHARS = 4096  # a longer line is cut around the keyword that selected it
MAX_CARRY_CHARS = 1 << 16
SAMPLE_BYTES = 1 << 18  # head and tail of a log kept for the steps that read it whole  # an unterminated line longer than this is flushed early
SATURATION_LINES = 50  # lines of one harmless keyword examined before it is searched no more

# CSI sequences (colours, cursor moves), OSC sequences (window titles, hyperlinks), and
# the two-character escapes; what terminals and `rich`/`tqdm` emit in captured logs.
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
ANSI_BYTES_RE = re.compile(ANSI_RE.pattern.encode("ascii"))


class Saturation:
    """Counts the lines of each saturable keyword and retires a keyword after SATURATION_LINES."""

    def __init__(self, saturable: Iterable[str]) -> None:
        self.seen = dict.fromkeys(saturable, 0)
        self.retired = 0  # keywords past SATURATION_LINES: only a change of this count changes what is live
        self._live: Optional[Tuple[List[str], int, List[str]]] = None  # (keywords, retired, live ones)

    def live(self, keywords: List[str]) -> List[str]:
        """The keywords still searched for. Asked for every candidate line: the answer is kept until a
        keyword retires (a few hundred keywords, millions of lines in a flooded log)."""
        cached = self._live
        if cached is not None and cached[0] is keywords and cached[1] == self.retired:
            return cached[2]
        out = [kw for kw in keywords if self.seen.get(kw, 0) < SATURATION_LINES]
        self._live = (keywords, self.retired, out)
        return out

    def parts(self, lineno: int, line: str, keywords: List[str],
              stats: SourceStats) -> Iterator[Tuple[int, str, List[str]]]:
        """The candidate parts of one line, as the scanners yield them, counted."""
        for part, cut, found in candidate_parts(line, self.live(keywords)):
            stats.truncated_lines += cut
            stats.candidate_lines += 1
            stats.replaced_chars += part.count("\ufffd")
            for kw in found:
                if kw in self.seen:
                    self.seen[kw] += 1
                    if self.seen[kw] == SATURATION_LINES:
                        self.retired += 1
            yield lineno, part, found


@dataclass
class SourceStats:
    """What the reader saw: reported in `explain --json` under "source"."""

    bytes_read: int = 0
    lines: int = 0
    candidate_lines: int = 0
    truncated_lines: int = 0
    replaced_chars: int = 0  # U+FFFD from undecodable bytes, in the candidate lines


def clean_text(text: str) -> str:
    """Normalise line ends and strip ANSI codes (for small texts and tests)."""
    return ANSI_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


class HeadAndTail:
    """A stream that keeps its first and last bytes while the scanner reads it, for the steps that
    need the log's text as a whole (similar.py). Chunks are kept by reference, never joined while
    reading, so a gigabyte costs nothing more than the two samples."""

    def __init__(self, stream: BinaryIO, head_bytes: int = SAMPLE_BYTES, tail_bytes: int = SAMPLE_BYTES) -> None:
        self.stream, self.head_bytes, self.tail_bytes = stream, head_bytes, tail_bytes
        self.head: List[bytes] = []
        self.kept = 0  # bytes in head
        self.recent: List[bytes] = []  # the last chunks, enough of them to cover tail_bytes
        self.recent_bytes = 0
        self.total = 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        if not data:
            return data
        self.total += len(data)
        if self.kept < self.head_bytes:
            part = data[:self.head_bytes - self.kept]
            self.head.append(part)
            self.kept += len(part)
            data_tail = data[len(part):]
        else:
            data_tail = data
        if data_tail:
            self.recent.append(data_tail)
            self.recent_bytes += len(data_tail)
            while len(self.recent) > 1 and self.recent_bytes - len(self.recent[0]) >= self.tail_bytes:
                self.recent_bytes -= len(self.recent.pop(0))
        return data

    def _kept(self) -> Tuple[bytes, bytes, int]:
        head = b"".join(self.head)
        tail = b"".join(self.recent)[-self.tail_bytes:]
        return head, tail, self.total - len(head) - len(tail)

    def text(self) -> str:
        """The first and last bytes read, decoded as the scanner decodes, ANSI codes removed."""
        head, tail, skipped = self._kept()
        joined = head + (b"\n" if skipped and tail else b"") + tail
        return clean_text(joined.decode("utf-8", errors="replace"))

    def whole_text(self) -> Optional[str]:
        """The whole log, its lines numbered as the scanner numbers them, if it was small enough to keep."""
        head, tail, skipped = self._kept()
        if skipped:
            return None
        text = (head + tail).decode("utf-8", errors="replace").replace("\r\n", "\n")
        return ANSI_RE.sub("", text) if "\x1b" in text else text


def _cap(line: str, hit: int) -> Tuple[str, bool]:
    if len(line) <= MAX_LINE_CHARS:
        return line, False
    start = max(0, min(hit - MAX_LINE_CHARS // 4, len(line) - MAX_LINE_CHARS))
    return line[start:start + MAX_LINE_CHARS], True


def iter_blocks(stream: BinaryIO, stats: SourceStats, chunk_bytes: int = CHUNK_BYTES) -> Iterator[str]:
    """Yield decoded, cleaned blocks that each end at a line boundary ('\\n')."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    carry = ""
    skipping = False  # inside an over-long line whose head was already flushed
    while True:
        raw = stream.read(chunk_bytes)
        final = not raw
        stats.bytes_read += len(raw)
        text = decoder.decode(raw, final=final)
        if not final and text.endswith("\r"):
            # "\r\n" may straddle two chunks; keep the "\r" for the next round.
            text, pending_cr = text[:-1], "\r"
        else:
            pending_cr = ""
        text = carry + text
        carry = ""
        text = text.replace("\r\n", "\n")
        if final:  # an unterminated last line is a line too
            block, rest = (text + "\n" if text and not text.endswith("\n") else text), ""
        else:
            cut = text.rfind("\n")
            block, rest = (text[:cut + 1], text[cut + 1:]) if cut >= 0 else ("", text)
        if skipping and block:  # the rest of an over-long line, up to its end, is dropped
            nl = block.find("\n")
            block, skipping = ("", True) if nl == -1 else (block[nl + 1:], False)
        if len(rest) > MAX_CARRY_CHARS:
            # A line with no end in sight: look at its head now, drop the rest of it.
            if not skipping:
                block += rest[:MAX_CARRY_CHARS] + "\n"
                stats.truncated_lines += 1
            skipping = True
            rest = ""
        carry = rest + pending_cr
        if block:
            if "\x1b" in block:
                block = ANSI_RE.sub("", block)
            yield block
        if final:
            return


def keywords_in(low_line: str, keywords: Iterable[str]) -> List[str]:
    return [kw for kw in keywords if kw in low_line]


def candidate_parts(line: str, keywords: Iterable[str]) -> Iterator[Tuple[str, List[str], bool]]:
    """The parts of one line that hold keywords, each capped around its first keyword, with the
    keywords found in it and whether it was cut. Parts are separated by bare carriage returns."""
    for part in line.rstrip("\r").split("\r"):
        low = part.lower()
        found = keywords_in(low, keywords)
        if found:
            yield (*_cap(part, low.find(found[0])), found)


def iter_candidate_lines(
    stream: BinaryIO, keywords: Iterable[str], stats: SourceStats, chunk_bytes: int = CHUNK_BYTES,
    saturable: Iterable[str] = (),
) -> Iterator[Tuple[int, str, List[str]]]:
    """Yield (line number, line part, keywords found in it) for every line part holding a keyword.

    Keywords must be lowercase; matching is case-insensitive. A keyword in `saturable` (one that
    only harmless or fact signatures use) is searched no more once it has shown
    SATURATION_LINES lines.
    """
    kws = sorted(set(keywords))
    saturation = Saturation(saturable)
    line_base = 0  # number of lines before the current block
    for block in iter_blocks(stream, stats, chunk_bytes):
        kws = saturation.live(kws)
        low = block.lower()
        starts: Dict[int, int] = {}  # line start -> line end
        for kw in kws:
            pos = low.find(kw)
            while pos != -1:
                start = low.rfind("\n", 0, pos) + 1
                end = low.find("\n", pos)
                end = len(low) if end == -1 else end
                starts[start] = end
                pos = low.find(kw, end)
        counted_to, lineno = 0, line_base
        for start in sorted(starts):
            lineno += block.count("\n", counted_to, start)
            counted_to = start
            yield from saturation.parts(lineno + 1, block[start:starts[start]], kws, stats)
        line_base += block.count("\n")
        stats.lines = line_base
