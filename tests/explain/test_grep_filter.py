"""The grep pre-filter and the pure-Python scanner find the same lines, numbered the same way."""

from __future__ import annotations

import io
import os
import time

import pytest
from hypothesis import given, settings, strategies as st

from gpudoctor.explain import explain_stream
import shutil

from gpudoctor.explain import grep_filter
from gpudoctor.explain.grep_filter import grep_command, iter_candidate_lines_grep, searcher_works
from gpudoctor.explain.reader import SATURATION_LINES, SourceStats, iter_candidate_lines

pytestmark = pytest.mark.skipif(grep_command() is None, reason="no usable grep on this machine")
# Every searcher this machine has (ripgrep and GNU grep) must agree with the Python scanner.
SEARCHERS = [b for b in (shutil.which(n) for n in grep_filter.SEARCHERS) if b and searcher_works(b)]


@pytest.fixture(autouse=True, params=SEARCHERS or [None], ids=lambda b: os.path.basename(b) if b else "none")
def searcher(request, monkeypatch):
    if request.param:
        monkeypatch.setattr(grep_filter, "grep_command", lambda: request.param)
    return request.param

KEYWORDS = ["invalid device ordinal", "cannot open shared object file", "created device /job:"]
FLOOD = b"Created device /job:localhost/replica:0/task:0/device:GPU:0 with 22259 MB memory\n"
ERROR = b"RuntimeError: CUDA error: invalid device ordinal"
PIECES = [ERROR, b"libcudnn.so.8: cannot open shared object file", b"epoch 3 loss 0.1", b"\x1b[32m",
          b"\x1b[0m", b"\r", b"\r\n", b"\n", b"\xff\xfe", "ünïcode ✓".encode(), b"x" * 70000, FLOOD]


def both(data: bytes, chunk: int, saturable=()):
    out = []
    for scan in (iter_candidate_lines, iter_candidate_lines_grep):
        stats = SourceStats()
        lines = list(scan(io.BytesIO(data), KEYWORDS, stats, chunk, saturable))
        out.append((lines, stats.lines, stats.candidate_lines))
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.sampled_from([7, 64, 4096, 1 << 18]))
def test_grep_and_python_scanners_agree(pieces, chunk):
    python, grep = both(b"".join(pieces), chunk)
    assert grep == python


def test_lines_are_numbered_as_grep_and_editors_number_them():
    data = b"a\r\nb\rc\n" + ERROR + b"\r\n" + b"progress 45%\r" + ERROR + b"\n"
    python, grep = both(data, 1 << 18)
    assert grep == python
    lines = python[0]
    assert [n for n, _, _ in lines] == [3, 4]
    assert lines[1][1] == ERROR.decode()  # the error part of a redrawn progress line, on its own


def test_a_flood_of_harmless_lines_is_examined_a_bounded_number_of_times():
    data = FLOOD * 20000 + ERROR + b"\n" + FLOOD * 100
    python, grep = both(data, 1 << 16, saturable=["created device /job:"])
    assert grep == python
    lines = grep[0]
    assert len(lines) == SATURATION_LINES + 1
    assert lines[-1] == (20001, ERROR.decode(), ["invalid device ordinal"])


def test_explain_gives_the_same_report_with_and_without_grep():
    data = (FLOOD * 300 + b"W dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; dlerror: "
            b"libcudnn.so.8: cannot open shared object file: No such file or directory\r\n" + ERROR + b"\n")
    reports = [explain_stream(io.BytesIO(data), use_grep=g) for g in (False, True)]
    python, grep = ([(f.code, f.evidence["line"], f.evidence["count"]) for f in r.findings] for r in reports)
    assert grep == python and [code for code, _, _ in grep] == ["invalid-device-ordinal", "cudnn-missing"]
    assert [(n.id, n.count) for n in reports[0].notes] == [(n.id, n.count) for n in reports[1].notes]


def test_stopping_early_ends_grep_and_does_not_hang():
    data = (ERROR + b"\n") * 200000  # far more than the pipes hold
    started = time.monotonic()
    lines = iter_candidate_lines_grep(io.BytesIO(data), KEYWORDS, SourceStats(), 1 << 16)
    assert next(lines)[0] == 1
    lines.close()
    assert time.monotonic() - started < 10


def test_without_grep_on_path_the_python_scanner_is_used(monkeypatch, tmp_path):
    grep_command.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))
    try:
        assert grep_command() is None
        result = explain_stream(io.BytesIO(ERROR + b"\n"))
        assert result.findings[0].code == "invalid-device-ordinal"
    finally:
        grep_command.cache_clear()
        monkeypatch.setenv("PATH", os.defpath)


def test_a_saturable_keyword_retires_after_its_lines_and_the_live_list_follows():
    from gpudoctor.explain.reader import SATURATION_LINES, Saturation, SourceStats

    keywords = ["created device", "cuda error"]
    saturation = Saturation(["created device"])
    assert saturation.live(keywords) == keywords and saturation.retired == 0
    stats = SourceStats()
    for n in range(SATURATION_LINES):
        list(saturation.parts(n, "I gpu_device.cc] Created device /GPU:0", keywords, stats))
    assert saturation.retired == 1
    assert saturation.live(keywords) == ["cuda error"]  # the answer kept before the retirement is not reused
    # a keyword that is not saturable never retires
    for n in range(SATURATION_LINES + 5):
        list(saturation.parts(n, "RuntimeError: CUDA error: out of memory", keywords, stats))
    assert saturation.retired == 1 and saturation.live(keywords) == ["cuda error"]
