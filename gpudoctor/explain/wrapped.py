"""Lines that a paste wrapped: one log message split over two lines.

A log copied from a narrow terminal, a web page or an e-mail often arrives folded: at a word
("Could not find \\n registered platform") or in the middle of a word or number, where the
terminal hard-wrapped ("CUDA version is 11.\\n0"). Each half alone no longer reads as the message.

Only a log small enough to be kept whole is looked at (a paste, not a machine's log file), and a
pair of lines is joined only where it reads as a message that neither half reads alone, so two
unrelated lines that happen to sit together add nothing.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Tuple

MIN_WRAPPED_CHARS = 40  # a folded line is long: short lines are whole messages
MAX_PAIRS = 1000  # pairs examined in one log (a paste is shorter), so a long log costs a bounded time

# A line that starts a new record rather than continuing the one before: a timestamp, a log level,
# a traceback's parts, a prompt, an indented (traceback or table) line, a list or a quote.
RECORD_START_RE = re.compile(
    r"^(?:\s|\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d|\[|\(|[IWEF]\d{4}\s|>>>|\$\s|#|\||\+-|-{3}|={3}|\*\s"
    r"|traceback\b|file \"|during handling|the above exception"
    r"|(?:warning|error|info|debug|critical|fatal|note)\b"
    r"|[A-Za-z_.]*(?:error|exception|warning)\s*:)",
    re.IGNORECASE)


def _folded(first: str, second: str) -> bool:
    return (len(first.rstrip()) >= MIN_WRAPPED_CHARS and bool(second.strip())
            and not RECORD_START_RE.match(second))


def wrapped_pairs(text: str) -> Iterator[Tuple[int, List[str]]]:
    """(line number of the first half, the ways the two halves may have been one line) for every
    pair of adjacent lines that may be one line folded. Both joins are offered: with the space a
    word wrap took away, and without one for a wrap inside a word or a number."""
    lines = text.split("\n")
    pairs = 0
    for i in range(len(lines) - 1):
        first, second = lines[i], lines[i + 1]
        if not _folded(first, second):
            continue
        pairs += 1
        if pairs > MAX_PAIRS:
            return
        head, tail = first.rstrip(), second.strip()
        joins = [f"{head} {tail}"]
        if head == first:  # no space left at the fold: it may have cut a word or a number
            joins.append(head + tail)
        yield i + 1, joins
