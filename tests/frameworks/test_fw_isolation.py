"""A framework import that raises, segfaults or hangs is a fact in the report, never a crash."""

from __future__ import annotations

import time

from gpudoctor.facts import Facts
from gpudoctor.probes.frameworks import probe_frameworks
from gpudoctor.rules import diagnose

from ..factories import gpu_machine as healthy_machine
from . import fakes


def gpu_machine(frameworks) -> Facts:
    """A healthy machine with one RTX 3090 and driver 535 (CUDA 12.2), and these framework facts."""
    facts = healthy_machine(count=1, name="NVIDIA GeForce RTX 3090", cc="8.6")
    facts.frameworks = frameworks
    return facts


def codes(findings):
    return [f.code for f in findings]


def test_torch_import_that_raises_is_reported_with_its_traceback(site):
    fakes.torch_that_raises(site)
    frameworks, statuses = probe_frameworks(site.context())
    live = frameworks.frameworks["torch"].live
    assert live.status == "import-failed"
    assert "libcudnn.so.8: cannot open shared object file" in live.import_error
    assert "Traceback" in live.traceback
    finding = next(f for f in diagnose(gpu_machine(frameworks)) if f.code == "framework-import-failed")
    assert finding.evidence["libraries"] == ["libcudnn.so.8"]
    assert "libcudnn.so.8" in " ".join(finding.fix)


def test_import_failure_points_at_the_missing_library_found_below(site):
    fakes.torch_that_raises(site)
    frameworks, _ = probe_frameworks(site.context())
    facts = gpu_machine(frameworks)
    from gpudoctor.codes import make_finding
    from gpudoctor.rules import RULES

    def library_layer(facts, prior):  # stands in for the CUDA-libraries rules, which run first
        yield make_finding("cudnn-missing", "libcudnn.so.8 is not found")

    findings = diagnose(facts, [library_layer] + list(RULES))
    failed = next(f for f in findings if f.code == "framework-import-failed")
    assert failed.caused_by == "cudnn-missing"


def test_torch_import_that_segfaults_is_a_crash_not_our_crash(site):
    fakes.torch_that_segfaults(site)
    frameworks, statuses = probe_frameworks(site.context())
    live = frameworks.frameworks["torch"].live
    assert live.status == "crashed"
    assert live.signal == "SIGSEGV"
    assert live.phase == "import"
    finding = next(f for f in diagnose(gpu_machine(frameworks)) if f.code == "framework-import-failed")
    assert "SIGSEGV" in finding.detail
    assert {s.name: s.status for s in statuses}["framework-torch"] == "crashed"


def test_torch_import_that_hangs_costs_its_timeout_and_names_the_probe(site):
    fakes.torch_that_hangs(site)
    started = time.monotonic()
    frameworks, statuses = probe_frameworks(site.context(timeout=3))
    live = frameworks.frameworks["torch"].live
    assert live.status == "timeout"
    assert live.phase == "import"
    facts = gpu_machine(frameworks)
    facts.probes = statuses
    (finding,) = [f for f in diagnose(facts) if f.code == "probe-timeout"]  # one finding, not one per rule
    assert finding.title == "PyTorch probe timed out (import)"  # the framework rule owns framework probes
    assert {s.name: s.status for s in statuses}["framework-torch"] == "timeout"
    assert time.monotonic() - started < 60  # the hang is killed, not waited for (a bound, not a timing)


def test_other_frameworks_still_report_when_one_hangs(site):
    fakes.torch_that_hangs(site)
    fakes.tensorflow_115_without_cuda(site)
    frameworks, _ = probe_frameworks(site.context(timeout=5))
    assert frameworks.frameworks["torch"].live.status == "timeout"
    tf = frameworks.frameworks["tensorflow"].live
    assert tf.status == "ok" and tf.version == "1.15.0"


def test_tensorflow_115_build_info_and_dso_loader_log_are_parsed(site):
    fakes.tensorflow_115_without_cuda(site)
    frameworks, _ = probe_frameworks(site.context())
    tf = frameworks.frameworks["tensorflow"]
    assert (tf.static.build, tf.static.cuda_version, tf.static.cudnn_version) == ("cuda", "10.0", "7")
    sonames = [s.soname for s in tf.static.sonames]
    assert "libcudart.so.10.0" in sonames and "libcublas.so.10.0" in sonames and "libcudnn.so.7" in sonames
    kinds = [line.kind for line in tf.live.log_lines]
    assert kinds == ["dlopen-failed", "dlopen-failed", "cannot-dlopen-gpu-libs"]
    assert [line.library for line in tf.live.log_lines[:2]] == ["libcudart.so.10.0", "libcudnn.so.7"]
    assert tf.live.log_lines[0].error == "libcudart.so.10.0: cannot open shared object file: No such file or directory"
    assert tf.live.built_with_cuda is True and tf.live.device_count == 0
    assert "build_info" in tf.live.errors  # tf.sysconfig.get_build_info() does not exist in 1.15


def test_tensorflow_that_cannot_dlopen_is_not_detected_because_of_the_missing_libraries(site):
    fakes.tensorflow_115_without_cuda(site)
    frameworks, _ = probe_frameworks(site.context())
    findings = diagnose(gpu_machine(frameworks))
    missing = next(f for f in findings if f.code == "cuda-library-missing")
    assert missing.evidence["libraries"] == ["libcudart.so.10.0", "libcudnn.so.7"]
    not_detected = next(f for f in findings if f.code == "framework-gpu-not-detected")
    assert not_detected.caused_by == "cuda-library-missing"
    assert "TensorFlow 1.15.0" in not_detected.detail


def test_quick_mode_imports_nothing(site):
    fakes.torch_that_hangs(site)
    frameworks, statuses = probe_frameworks(site.context(quick=True))
    torch = frameworks.frameworks["torch"]
    assert torch.live is None
    assert (torch.static.version, torch.static.cuda_version, torch.static.build) == ("2.0.1+cu118", "11.8", "cuda")
    assert [s.name for s in statuses] == ["framework-packages"]
