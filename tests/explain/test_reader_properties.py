"""Random bytes, huge lines and mixed encodings never crash the reader or the matcher."""

from __future__ import annotations

import io

from hypothesis import given, settings, strategies as st

from gpudoctor.explain import explain_stream
from gpudoctor.explain.reader import MAX_LINE_CHARS, SourceStats, iter_blocks, iter_candidate_lines

ERROR_LINE = b"RuntimeError: CUDA error: invalid device ordinal"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4096), st.integers(min_value=1, max_value=64))
def test_random_bytes_never_crash(data, chunk):
    explain_stream(io.BytesIO(data), chunk_bytes=chunk)


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=2000), st.sampled_from(["utf-8", "utf-16", "latin-1", "cp1252", "gb18030"]),
       st.integers(min_value=1, max_value=97))
def test_mixed_encodings_never_crash_and_keep_the_error(text, encoding, chunk):
    data = text.encode(encoding, "replace") + b"\r\n" + ERROR_LINE + b"\r\n"
    result = explain_stream(io.BytesIO(data), chunk_bytes=chunk)
    assert "invalid-device-ordinal" in [f.code for f in result.findings]


@settings(max_examples=20, deadline=None)
@given(st.integers(min_value=1, max_value=300_000), st.integers(min_value=7, max_value=65536))
def test_huge_lines_are_capped(length, chunk):
    data = b"x" * length + ERROR_LINE + b"y" * length + b"\n" + ERROR_LINE + b"\n"
    stats = SourceStats()
    lines = list(iter_candidate_lines(io.BytesIO(data), ["invalid device ordinal"], stats, chunk))
    assert lines and all(len(line) <= MAX_LINE_CHARS for _, line, _ in lines)
    assert lines[-1][0] == 2  # line numbers survive the cap


def test_ansi_colours_and_line_ends_are_normalised():
    # "\r\n" ends a line once; a bare "\r" (a progress bar redrawn) stays inside its line, as
    # grep, sed and editors count lines.
    data = b"\x1b[31mRuntimeError: CUDA error: invalid\x1b[0m device ordinal\r\nnext\rline\n"
    blocks = "".join(iter_blocks(io.BytesIO(data), SourceStats(), 5))
    assert blocks == "RuntimeError: CUDA error: invalid device ordinal\nnext\rline\n"
    for use_grep in (False, True):
        assert explain_stream(io.BytesIO(data), use_grep=use_grep).findings[0].code == "invalid-device-ordinal"


def test_crlf_split_across_chunks_counts_one_line_end():
    data = b"a\r\nb\r\n" + ERROR_LINE + b"\r\n"
    for chunk in range(1, 8):
        stats = SourceStats()
        lines = list(iter_candidate_lines(io.BytesIO(data), ["invalid device ordinal"], stats, chunk))
        assert lines[0][0] == 3 and stats.lines == 3
