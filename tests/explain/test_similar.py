"""explain's last resort: a failing log no line explains gets the cause of the known reports it reads like."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from gpudoctor.explain import explain_stream, explain_text
from gpudoctor.explain.reader import HeadAndTail
from gpudoctor.explain.similar import KnownReport, Memory, likely_cause, load_memory, tokens, vote
from gpudoctor.model import Severity

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parent / "corpus"


def _report(code: str, source: str, text: str) -> KnownReport:
    return KnownReport(code, source, tokens(text))


SMALL = Memory([
    _report("container-no-gpu-access", "https://example.org/c1", "docker run image torch gpu false container"),
    _report("container-no-gpu-access", "https://example.org/c2", "docker compose service gpu container runtime"),
    _report("wsl-driver-misconfigured", "https://example.org/w1", "wsl ubuntu microsoft gpu windows driver"),
    _report("", "https://example.org/b1", "epoch loss accuracy gpu training"),
])


def never_explained(line: str) -> bool:
    return False


def test_tokens_keep_versions_and_sonames_whole():
    assert {"libcudart.so.11.0", "sm_37", "cu118", "docker"} <= tokens("dlopen libcudart.so.11.0 sm_37 +cu118 Docker.")


def test_the_nearest_reports_vote_for_their_cause():
    neighbours = SMALL.nearest(tokens("docker run my image: torch.cuda.is_available() False in the container"))
    code, voters = vote(neighbours)
    assert code == "container-no-gpu-access"
    assert [v.report.source for v in voters] == ["https://example.org/c1", "https://example.org/c2"]
    assert "docker" in voters[0].shared


def test_a_failing_log_gets_a_warning_with_the_threads_it_resembles():
    finding = likely_cause("wsl ubuntu: RuntimeError: no gpu found by the driver", never_explained, SMALL)
    assert finding is not None and finding.code == "wsl-driver-misconfigured"
    assert finding.severity == Severity.WARNING  # a likely cause, never stated as certain
    assert finding.evidence["similar_reports"][0]["source"] == "https://example.org/w1"
    assert finding.evidence["text"].startswith("wsl ubuntu: RuntimeError")
    assert finding.fix


def test_no_guess_without_a_failure_a_gpu_or_a_resemblance():
    assert likely_cause("wsl ubuntu gpu windows driver: all good", never_explained, SMALL) is None  # no failure
    assert likely_cause("requests: error while fetching the page", never_explained, SMALL) is None  # not the GPU stack
    assert likely_cause("GPU error: zzz qqq", never_explained, SMALL) is None  # shares nothing telling
    assert likely_cause("epoch 3 loss 0.1 accuracy 0.9 on gpu; error count 0", never_explained, SMALL) is None  # healthy


def test_a_failure_that_a_signature_already_reads_is_no_reason_to_guess():
    assert likely_cause("wsl ubuntu gpu: harmless error", lambda line: True, SMALL) is None


def test_memory_without_one_thread():
    assert [r.source for r in SMALL.without("https://example.org/c1").reports] == [
        "https://example.org/c2", "https://example.org/w1", "https://example.org/b1"]


def test_harmless_tensorrt_warnings_alone_stay_healthy():
    log = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
           "'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory\n"
           "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Cannot dlopen some TensorRT "
           "libraries. If you would like to use Nvidia GPU with TensorRT, please make sure the missing libraries "
           "mentioned above are installed properly.\n")
    result = explain_text(log)
    assert not [f for f in result.findings if f.severity in (Severity.ERROR, Severity.WARNING)]


def test_the_guess_never_replaces_a_signature():
    result = explain_text("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert result.findings[0].code == "gpu-arch-unsupported"
    assert "inferred_from" not in result.findings[0].evidence


def test_head_and_tail_keep_the_ends_of_a_large_log():
    body = b"".join(b"line %d\n" % i for i in range(200_000))
    sample = HeadAndTail(io.BytesIO(body), head_bytes=1000, tail_bytes=1000)
    while sample.read(4096):
        pass
    text = sample.text()
    assert text.startswith("line 0\n") and text.endswith("line 199999\n")
    assert len(text) < 2100
    assert len(sample.recent) <= 2  # chunks kept by reference, not the whole log


def test_head_and_tail_of_a_small_log_is_the_whole_log():
    sample = HeadAndTail(io.BytesIO(b"a\r\nb \x1b[31mred\x1b[0m\n"), head_bytes=4, tail_bytes=100)
    while sample.read(3):
        pass
    assert sample.text() == "a\nb red\n"


def test_the_memory_is_the_training_corpus_and_is_current():
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "build_known_reports.py"), "--check"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    sources = {r.source for r in load_memory().reports}
    holdout = (Path(__file__).parent / "holdout").rglob("manifest.toml")
    for manifest in holdout:  # the hold-out sets measure explain: never in its memory
        for line in manifest.read_text(encoding="utf-8").splitlines():
            if line.startswith("source = "):
                assert line.split('"')[1] not in sources, manifest


def test_explain_command_gives_the_likely_cause_in_json():
    # A corpus log no signature reads (the thread's cause is zombie processes holding memory), read
    # the way the product reads it: the memory without this thread's own report.
    case = CORPUS / "round4" / "memory-zombie-holders-mxnet4242.log"
    with open(case, "rb") as fh:
        alone = explain_stream(fh, memory=load_memory().without("https://github.com/apache/mxnet/issues/4242"))
    assert alone.findings[0].code == "gpu-memory-full" and alone.findings[0].severity == Severity.WARNING
    p = subprocess.run([sys.executable, "-m", "gpudoctor.commands.explain", "explain", "--json", str(case)],
                       capture_output=True, cwd=ROOT, timeout=60)
    first = json.loads(p.stdout)["findings"][0]
    assert first["severity"] == "warning" and first["title"].startswith("Likely: ")
    assert first["evidence"]["inferred_from"] == "similar known reports"
    assert all(r["source"].startswith("https://") for r in first["evidence"]["similar_reports"])


def test_a_missing_or_damaged_memory_means_no_guess_not_a_traceback(tmp_path, monkeypatch):
    from gpudoctor.explain import similar

    for content in (None, "{not json", '{"reports": [{"code": "x"}]}'):
        path = tmp_path / "known_reports.json"
        if content is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(content, encoding="utf-8")
        monkeypatch.setattr(similar, "MEMORY", path)
        similar.load_memory.cache_clear()
        try:
            assert similar.likely_cause("GPU: RuntimeError: no gpu found by the driver", never_explained) is None
        finally:
            similar.load_memory.cache_clear()
