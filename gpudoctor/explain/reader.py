"""Stream a log of any size and encoding into candidate lines, with flat memory.

A pasted log is untrusted text: any encoding, ANSI colours, Windows or old-Mac line ends,
progress bars redrawn with a bare carriage return, and sometimes megabytes without a newline.
The reader decodes bytes incrementally with errors="replace", normalises line ends, strips
ANSI escape sequences, and caps every line, so that memory depends on the chunk size only.

To stay fast on a 1 GB log, it never runs a Python loop per line: each decoded block is
lowercased once and searched with ``str.find`` for the keywords of the signature catalogue;
only the lines that contain a keyword are cut out and handed to the matcher.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import BinaryIO, Dict, Iterable, Iterator, List, Tuple

CHUNK_BYTES = 1 << 20  # 1 MiB of input at a time
MAX_LINE_CHARS = 4096  # a longer line is cut around the keyword that selected it
MAX_CARRY_CHARS = 1 << 16  # an unterminated line longer than this is flushed early

# CSI sequences (colours, cursor moves), OSC sequences (window titles, hyperlinks), and
# the two-character escapes; what terminals and `rich`/`tqdm` emit in captured logs.
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


@dataclass
class SourceStats:
    """What the reader saw: reported in `explain --json` under "source"."""

    bytes_read: int = 0
    lines: int = 0
    candidate_lines: int = 0
    truncated_lines: int = 0
    replaced_chars: int = 0


def clean_text(text: str) -> str:
    """Normalise line ends and strip ANSI codes (for small texts and tests)."""
    return ANSI_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


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
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if final:
            block, rest = text, ""
        else:
            cut = text.rfind("\n")
            block, rest = (text[:cut + 1], text[cut + 1:]) if cut >= 0 else ("", text)
        if skipping and block:
            nl = block.find("\n")
            block = block[nl + 1:]
            skipping = False
        if len(rest) > MAX_CARRY_CHARS:
            # A line with no end in sight: look at its head now, drop the rest of it.
            if not skipping:
                block += rest[:MAX_CARRY_CHARS] + "\n"
                stats.truncated_lines += 1
            skipping = True
            rest = ""
        carry = rest + pending_cr
        if block:
            stats.replaced_chars += block.count("\ufffd")
            if "\x1b" in block:
                block = ANSI_RE.sub("", block)
            yield block
        if final:
            return


def iter_candidate_lines(
    stream: BinaryIO, keywords: Iterable[str], stats: SourceStats, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[Tuple[int, str, List[str]]]:
    """Yield (line number, line, keywords found in it) for every line holding a keyword.

    Keywords must be lowercase; matching is case-insensitive.
    """
    kws = sorted(set(keywords))
    line_base = 0  # number of lines before the current block
    for block in iter_blocks(stream, stats, chunk_bytes):
        low = block.lower()
        hits: Dict[int, Tuple[int, int, List[str]]] = {}
        for kw in kws:
            pos = low.find(kw)
            while pos != -1:
                start = low.rfind("\n", 0, pos) + 1
                end = low.find("\n", pos)
                end = len(low) if end == -1 else end
                entry = hits.get(start)
                if entry is None:
                    hits[start] = (end, pos, [kw])
                elif kw not in entry[2]:
                    entry[2].append(kw)
                pos = low.find(kw, end)
        counted_to, lineno = 0, line_base
        for start in sorted(hits):
            end, hit, found = hits[start]
            lineno += block.count("\n", counted_to, start)
            counted_to = start
            line, cut = _cap(block[start:end], hit - start)
            if cut:
                stats.truncated_lines += 1
            stats.candidate_lines += 1
            yield lineno + 1, line, found
        newlines = block.count("\n")
        if block and not block.endswith("\n"):
            newlines += 1  # the unterminated last line of the input
        line_base += newlines
        stats.lines = line_base
