"""Pastes that folded a message over two lines (gpudoctor/explain/wrapped.py)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from gpudoctor.explain import explain_stream, explain_text
from gpudoctor.explain.reader import SAMPLE_BYTES
from gpudoctor.explain.wrapped import wrapped_pairs

ROOT = Path(__file__).resolve().parents[2]

# JAX's message folded at a word, as a narrow terminal or an issue form shows it.
JAX_WORD_WRAPPED = (
    "RuntimeError: Backend 'gpu' failed to initialize: NOT_FOUND: Could not find \n"
    'registered platform with name: "cuda". Available platform names are: \n'
    "Host Interpreter\n"
)
# XLA's driver warning hard-wrapped inside a version number and inside a word.
XLA_HARD_WRAPPED = (
    "2022-12-16 18:31:30.311235: W external/org_tensorflow/tensorflow/compiler/xla/service/gpu/nvptx_compil"
    "er.cc:497] The NVIDIA driver's CUDA version is 11.\n"
    "0 which is older than the ptxas CUDA version (11.6.124). Because the driver is older than the ptxas ver\n"
    "sion, XLA is disabling parallel compilation, which may slow down compilation.\n"
)


def codes(text: str):
    return [f.code for f in explain_text(text).findings]


def test_a_message_folded_at_a_word_is_read_whole():
    assert codes(JAX_WORD_WRAPPED.replace(" \n", "\n").replace("\n", " ", 1)) == ["cpu-only-build"]  # unfolded
    assert codes(JAX_WORD_WRAPPED)[0] == "cpu-only-build"
    # the same fold without the trailing space the terminal left
    assert codes(JAX_WORD_WRAPPED.replace(" \n", "\n"))[0] == "cpu-only-build"


def test_a_number_cut_by_a_hard_wrap_is_read_whole():
    result = explain_text(XLA_HARD_WRAPPED)
    finding = result.findings[0]
    assert finding.code == "driver-too-old"
    assert finding.evidence["line"] == 1
    assert "11.0" in finding.detail


def test_lines_that_start_a_new_record_are_never_joined():
    text = ("A long first line of prose that says nothing in particular about it\n"
            "2024-01-01 10:00:00 I the next record\n"
            "Traceback (most recent call last):\n"
            "  File \"x.py\", line 1, in <module>\n"
            "RuntimeError: CUDA error: out of memory at the end of a long line of text\n"
            "short\n")
    assert list(wrapped_pairs(text)) == [(5, ["RuntimeError: CUDA error: out of memory at the end of a long line "
                                              "of text short", "RuntimeError: CUDA error: out of memory at the end "
                                              "of a long line of textshort"])]


def test_two_lines_that_each_read_alone_add_nothing():
    text = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
            "'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file\n"
            "nvidia-smi has failed because it couldn't communicate with the NVIDIA driver.\n")
    joined_alone = explain_text(text)
    assert {f.code for f in joined_alone.findings} == {"cuda-library-missing", "driver-not-loaded"}
    assert all(f.evidence["line"] in (1, 2) and f.evidence["count"] == 1 for f in joined_alone.findings)


def test_a_log_too_big_to_keep_whole_is_not_searched_for_folds():
    filler = ("x" * 99 + "\n").encode() * (2 * SAMPLE_BYTES // 100 + 10)
    log = filler + JAX_WORD_WRAPPED.encode()
    findings = explain_stream(io.BytesIO(log)).findings
    # no signature read it (the last resort may still guess from the log's words)
    assert not [f for f in findings if f.code == "cpu-only-build" and "signature" in f.evidence]


def test_the_command_reads_a_folded_paste(tmp_path):
    log = tmp_path / "folded.log"
    log.write_bytes(XLA_HARD_WRAPPED.replace("\n", "\r\n").encode())
    p = subprocess.run([sys.executable, "-m", "gpudoctor.commands.explain", "explain", "--json", str(log)],
                       capture_output=True, cwd=ROOT, timeout=60)
    report = json.loads(p.stdout)
    assert report["findings"][0]["code"] == "driver-too-old"
    assert p.stderr == b""
