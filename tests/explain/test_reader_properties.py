"""Random bytes, huge lines and mixed encodings never crash the reader or the matcher."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

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


# ---- issue 9's classes: Windows, containers, WSL, installers, visibility, CPU-only builds ----
# The logs these classes come in are often Windows consoles (cp1252/GBK, CRLF), coloured
# docker/pip output, or several processes interleaved; findings must still come out.
CORPUS9 = Path(__file__).parent / "corpus"
CLASS_LOGS = {
    "windows/fbgemm-chinese-fay130.log": "dll-load-failed",
    "windows/cudart110-tf291-tf57103.log": "dll-load-failed",
    "containers/select-driver-bundlesdf184.log": "container-no-gpu-access",
    "wsl/nvml-blocked-l40s-wsl14339.log": "wsl-driver-misconfigured",
    "install/py3121-tf62777.log": "python-unsupported",
    "visibility/export-2-timeseries10.log": "no-visible-gpu",
    "cpu-only/conda-plan-cpuonly-conda11001.log": "cpu-only-build",
}


def _codes(data: bytes, chunk: int = 1 << 16):
    return [f.code for f in explain_stream(io.BytesIO(data), chunk_bytes=chunk).findings]


@pytest.mark.parametrize("name,code", sorted(CLASS_LOGS.items()))
def test_class_logs_survive_windows_encodings_crlf_and_colours(name, code):
    text = (CORPUS9 / name).read_text(encoding="utf-8")
    for encoding in ("utf-8", "cp1252", "gb18030", "utf-16"):
        data = text.replace("\n", "\r\n").encode(encoding, "replace")
        if encoding == "utf-16":
            continue  # a UTF-16 paste is decoded as mojibake; it must only not crash
        assert code in _codes(data), encoding
    _codes(text.encode("utf-16"))
    coloured = "".join(f"\x1b[1;31m{line}\x1b[0m\n" for line in text.splitlines())
    assert _codes(coloured.encode())[0] == code


@pytest.mark.parametrize("name,code", sorted(CLASS_LOGS.items()))
def test_class_logs_pasted_twice_interleaved_and_in_huge_lines(name, code):
    text = (CORPUS9 / name).read_text(encoding="utf-8")
    assert _codes((text + text).encode())[0] == code
    noise = [f"(pid={n}) epoch {n} loss 0.{n}" for n in range(len(text.splitlines()))]
    interleaved = "\n".join(x for pair in zip(text.splitlines(), noise) for x in pair)
    assert _codes(interleaved.encode(), chunk=97)[0] == code
    huge = ("x" * 3_000_000 + "\n" + text + "\n" + "y" * 3_000_000 + "\n").encode()
    assert _codes(huge, chunk=1 << 20)[0] == code


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2048))
def test_class_keywords_amid_random_bytes_never_crash(junk):
    for name in CLASS_LOGS:
        line = (CORPUS9 / name).read_bytes().splitlines()[-1]
        explain_stream(io.BytesIO(junk + line + junk + b"\r\n" + junk), chunk_bytes=61)
