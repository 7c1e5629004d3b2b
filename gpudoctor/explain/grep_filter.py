"""The fast path of the keyword pre-filter: the system's `grep -F` finds the candidate lines.

Python cannot search a gigabyte for a hundred literals in one pass (one `str.find` per keyword
is a pass each), while grep's fixed-string matcher finds all of them at once at memory speed.
So, as ripgrep does, gpudoctor extracts the literals and lets a multi-literal search find the
few lines that hold one; only those lines meet Python and the regular expressions. Where no
usable grep exists (native Windows), reader.py's pure-Python scanner does the same work, more
slowly, with the same results (tests/explain/test_grep_filter.py holds the two side by side).

A writer thread owns what grep reads: the raw bytes with ANSI escape sequences removed (a colour
code must not split a keyword) and over-long lines cut to their head, so grep's memory stays
bounded and its line numbers (`-n`) are the log's. A harmless or fact-only keyword that floods
the log (TensorFlow's "Created device" line, once per step in some programs) retires after
SATURATION_LINES lines: grep is restarted without it, so a flood costs Python a bounded number
of lines.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import threading

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows, where no grep is used anyway
    fcntl = None  # type: ignore[assignment]
from functools import lru_cache
from typing import BinaryIO, Iterable, Iterator, List, Optional, Tuple

from .reader import ANSI_BYTES_RE, MAX_CARRY_CHARS, Saturation, SourceStats

GREP_CHUNK_BYTES = 1 << 18  # with a 1 MiB pipe, Python prepares the next block while grep reads this one
PIPE_BYTES = 1 << 20  # Linux's default pipe-max-size; the default 64 KiB pipe serialises the two
GREP_ENV = {"LC_ALL": "C"}  # bytes in, bytes out; -i folds ASCII, which is all a keyword's letters need
NO_KEYWORD = "\x01gpudoctor: no keyword left\x01"  # a pattern no log line holds


# ripgrep first: its multi-literal search (SIMD "Teddy") runs this catalogue's few hundred keywords
# two to three times faster than GNU grep's -F; GNU grep is everywhere else. Same flags, same output.
SEARCHERS = ("rg", "grep")


def searcher_args(binary: str) -> List[str]:
    """The command line that prints `N:line` for each line holding a keyword (case-insensitive, bytes)."""
    args = [binary, "-a", "-F", "-i", "-n"]
    if os.path.basename(binary) == "rg":
        # a user's ~/.ripgreprc must not change what is printed, and a log is bytes: no BOM sniffing
        # (ripgrep would read a log starting with FF FE as UTF-16 and transcode it)
        args[1:1] = ["--no-config", "--encoding", "none"]
    return args


def searcher_works(binary: str) -> bool:
    try:
        probe = subprocess.run(searcher_args(binary) + ["-e", "cuda error"], input=b"x\r\nA CUDA Error\n",
                               capture_output=True, timeout=5, env={**os.environ, **GREP_ENV})
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0 and probe.stdout == b"2:A CUDA Error\n"


@lru_cache(maxsize=1)
def grep_command() -> Optional[str]:
    """The first searcher on PATH that does what the filter needs (-a -F -i -n, patterns from -e), or None."""
    if os.name == "nt":
        return None
    for name in SEARCHERS:
        binary = shutil.which(name)
        if binary and searcher_works(binary):
            return binary
    return None


def grep_input(stream: BinaryIO, stats: SourceStats, chunk_bytes: int) -> Iterator[bytes]:
    """Blocks of whole lines, "\\n"-terminated, without ANSI codes, no line over MAX_CARRY_CHARS."""
    carry = b""
    skipping = False  # inside an over-long line whose head was already kept
    while True:
        raw = stream.read(chunk_bytes)
        final = not raw
        stats.bytes_read += len(raw)
        text = carry + raw
        if final:
            block, rest = (text + b"\n" if text and not text.endswith(b"\n") else text), b""
        else:
            cut = text.rfind(b"\n")
            block, rest = (text[:cut + 1], text[cut + 1:]) if cut >= 0 else (b"", text)
        if skipping and block:
            block = block[block.find(b"\n") + 1:]
            skipping = False
        if len(rest) > MAX_CARRY_CHARS:
            if not skipping:  # a line with no end in sight: keep its head, drop the rest
                block += rest[:MAX_CARRY_CHARS] + b"\n"
                stats.truncated_lines += 1
            skipping, rest = True, b""
        carry = rest
        if block:
            yield ANSI_BYTES_RE.sub(b"", block) if b"\x1b" in block else block
        if final:
            return


def _write_all(pipe, data: bytes) -> None:
    """Write straight to the pipe's descriptor: a buffered writer would copy every block once more."""
    view, fd = memoryview(data), pipe.fileno()
    while view:
        view = view[os.write(fd, view):]


def _widen_pipe(pipe) -> None:
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # the constant is in fcntl from Python 3.10
    try:
        fcntl.fcntl(pipe.fileno(), setpipe, PIPE_BYTES)
    except (AttributeError, OSError):
        pass  # a smaller pipe only costs speed


class _Feeder(threading.Thread):
    """Writes the log into grep; starts a new grep, without the retired keywords, when asked."""

    def __init__(self, grep: str, stream: BinaryIO, saturation: Saturation, keywords: List[str],
                 stats: SourceStats, chunk_bytes: int) -> None:
        super().__init__(daemon=True)
        self.grep, self.stream, self.saturation, self.keywords = grep, stream, saturation, keywords
        self.stats, self.chunk_bytes = stats, chunk_bytes
        self.greps: "queue.Queue[Optional[Tuple[subprocess.Popen, int]]]" = queue.Queue()
        self.restart = threading.Event()
        self.error: Optional[BaseException] = None
        self.procs: List[subprocess.Popen] = []

    def _start(self, line_offset: int) -> subprocess.Popen:
        args = searcher_args(self.grep)
        for kw in self.saturation.live(self.keywords) or [NO_KEYWORD]:
            args += ["-e", kw]
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env={**os.environ, **GREP_ENV})
        _widen_pipe(proc.stdin)
        self.procs.append(proc)
        self.greps.put((proc, line_offset))
        return proc

    def run(self) -> None:
        lines_fed = 0
        proc = self._start(0)
        try:
            for block in grep_input(self.stream, self.stats, self.chunk_bytes):
                if self.restart.is_set():
                    self.restart.clear()
                    proc.stdin.close()
                    proc = self._start(lines_fed)
                _write_all(proc.stdin, block)
                lines_fed += block.count(b"\n")
                self.stats.lines = lines_fed
        except BaseException as exc:  # a read error, or a grep that died: the reader re-raises it
            self.error = exc
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass
            self.greps.put(None)

    def stop(self) -> None:
        """End every grep (the reader stopped early or failed), so that no write blocks forever."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def iter_candidate_lines_grep(stream: BinaryIO, keywords: Iterable[str], stats: SourceStats,
                              chunk_bytes: int = GREP_CHUNK_BYTES,
                              saturable: Iterable[str] = ()) -> Iterator[Tuple[int, str, List[str]]]:
    """reader.iter_candidate_lines, with grep doing the search. Needs grep_command()."""
    kws = sorted(set(keywords))
    saturation = Saturation(saturable)
    feeder = _Feeder(grep_command() or "grep", stream, saturation, kws, stats, chunk_bytes)
    feeder.start()
    try:
        while True:
            started = feeder.greps.get()
            if started is None:
                break
            proc, line_offset = started
            for raw in proc.stdout:
                number, _, text = raw.rstrip(b"\n").partition(b":")
                retired_before = saturation.retired
                yield from saturation.parts(line_offset + int(number), text.decode("utf-8", "replace"), kws, stats)
                if saturation.retired > retired_before:
                    feeder.restart.set()
            proc.stdout.close()
            proc.wait()
    finally:
        feeder.stop()
        feeder.join(timeout=5)
    if feeder.error is not None:
        raise feeder.error
