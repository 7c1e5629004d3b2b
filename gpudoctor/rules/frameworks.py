"""Framework rules: PyTorch, TensorFlow, JAX and CuPy, from their packages, builds and live checks.

Every finding carries `evidence["framework"]` (or `evidence["frameworks"]`) so the terminal's
per-framework readiness line can point at it. Symptoms name the lowest broken layer in
`caused_by`: TensorFlow's "Cannot dlopen some GPU libraries" is caused by the missing library,
which is caused by nothing above it.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional

from .. import compat
from ..codes import make_finding
from ..facts import Facts
from ..facts.frameworks import Distribution, FrameworkFacts, normalize_name
from ..model import Finding, Severity
from .base import Prior
from ..versions import version_parts
from .framework_facts import label
from .framework_libraries import tensorflow_cuda_fix
from .situation import cuda_version_text, driver_cuda_version, driver_sees_gpu, pip, with_target_pip

# Lower-layer findings that stop a framework from seeing or using the GPU, lowest layer first.
GPU_ROOT_CAUSES = (
    "container-no-gpu-access", "driver-not-loaded", "wsl-driver-misconfigured", "device-nodes-missing", "uvm-not-loaded",
    "libcuda-missing", "nvml-driver-mismatch", "cuda-init-failed",
    "no-visible-gpu", "invalid-device-ordinal", "gpu-memory-full",
    "cuda-library-missing", "cudnn-missing", "cuda-version-mismatch", "cudnn-version-mismatch",
    "driver-too-old", "gpu-arch-unsupported", "platform-unsupported", "python-unsupported",
)
# The framework probes' ProbeStatus names start with this; these rules own their timeouts and
# crashes (a generic probe rule should skip them).
FRAMEWORK_PROBE_PREFIX = "framework-"
TF_VARIANTS = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tf-nightly", "tf-nightly-gpu",
               "tf-nightly-cpu", "tensorflow-intel", "tensorflow-macos", "tensorflow-aarch64")
TORCH_COMPANIONS = ("torchvision", "torchaudio")
_NVIDIA_CU = re.compile(r"^(nvidia-[a-z0-9-]+?)-cu(\d+)$")


# -- situation helpers (pure) -------------------------------------------------------------------

def _base_version(version: Optional[str]) -> str:
    return (version or "").split("+")[0]


def _installed_by_conda(facts: Facts, fw: FrameworkFacts) -> bool:
    dists = facts.frameworks.installed(fw.static.distribution or fw.name)
    return any(d.installer == "conda" for d in dists)


def _frameworks(facts: Facts) -> List[FrameworkFacts]:
    return list(facts.frameworks.frameworks.values())


# -- conflicting-packages -----------------------------------------------------------------------

def conflicting_packages(facts: Facts, prior: Prior) -> Iterable[Finding]:
    yield from _tensorflow_variants(facts)
    yield from _duplicate_distributions(facts)
    yield from _conda_and_pip_framework(facts)
    yield from _mixed_cuda_majors(facts)
    yield from _conda_cuda_under_wheels(facts)
    yield from _pins_not_met(facts)


def _tensorflow_variants(facts: Facts) -> Iterable[Finding]:
    dists = [d for d in facts.frameworks.distributions if d.key in TF_VARIANTS]
    required = {normalize_name(_req_name(r)) for d in dists for r in d.requires}
    independent = [d for d in dists if d.key not in required]  # tensorflow -> tensorflow-intel is normal
    names = sorted({d.key for d in independent})
    if len(names) < 2:
        return
    version = _base_version(next((d.version for d in dists if d.key == "tensorflow"), dists[0].version))
    target = "tensorflow[and-cuda]" if compat.tensorflow_has_and_cuda(version) else "tensorflow"
    yield make_finding(
        "conflicting-packages",
        "%s are all installed. They install the same `tensorflow` package folder, so the files on disk are a "
        "mix of whichever was installed last." % " and ".join("%s %s" % (d.name, d.version) for d in independent),
        evidence={"frameworks": ["tensorflow"], "distributions": {d.name: d.version for d in independent}},
        fix=["%s uninstall -y %s" % (pip(facts), " ".join(names)),
             '%s install "%s==%s"' % (pip(facts), target, version)])


def _req_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return match.group(1) if match else requirement


def _duplicate_distributions(facts: Facts) -> Iterable[Finding]:
    by_key: Dict[str, List[Distribution]] = {}
    for dist in facts.frameworks.distributions:
        by_key.setdefault(dist.key, []).append(dist)
    for key, dists in sorted(by_key.items()):
        if len(dists) < 2:
            continue
        first = dists[0]
        framework = "tensorflow" if key in TF_VARIANTS else key.split("-")[0]
        yield make_finding(
            "conflicting-packages",
            "%s is installed %d times: %s. Python imports the first (%s %s in %s); pip and the other tools "
            "may see another." % (first.name, len(dists),
                                  "; ".join("%s in %s" % (d.version, d.location) for d in dists),
                                  first.name, first.version, first.location),
            title="%s is installed more than once" % first.name,
            evidence={"frameworks": [framework], "distribution": first.name,
                      "copies": [{"version": d.version, "location": d.location, "installer": d.installer}
                                 for d in dists]},
            fix=["Run `%s uninstall -y %s` until pip says it is not installed, then install it once."
                 % (pip(facts), first.name),
                 "A copy in the user site (~/.local/lib/python*/site-packages) shadows the environment's: "
                 "remove it there, or set PYTHONNOUSERSITE=1."])


def _conda_and_pip_framework(facts: Facts) -> Iterable[Finding]:
    conda = {p.name: p for p in facts.frameworks.conda_packages}
    for conda_name, dist_name in (("pytorch", "torch"), ("tensorflow", "tensorflow"), ("cupy", "cupy")):
        pkg = conda.get(conda_name)
        pip_copies = [d for d in facts.frameworks.installed(dist_name) if d.installer not in (None, "conda")]
        if pkg is None or not pip_copies:
            continue
        yield make_finding(
            "conflicting-packages",
            "conda's %s %s (build %s) and pip's %s %s are both installed in %s; pip wrote over conda's files, "
            "and conda still believes its own build is there." % (conda_name, pkg.version, pkg.build, dist_name,
                                                                   pip_copies[0].version, facts.frameworks.conda_prefix),
            title="%s is installed by both conda and pip" % dist_name,
            evidence={"frameworks": [dist_name], "conda": "%s=%s=%s" % (conda_name, pkg.version, pkg.build),
                      "pip": "%s==%s" % (dist_name, pip_copies[0].version)},
            fix=["Keep one: `%s uninstall -y %s` and `conda install --force-reinstall %s`, or "
                 "`conda remove --force %s` and keep pip's." % (pip(facts), dist_name, conda_name, conda_name)])


def _mixed_cuda_majors(facts: Facts) -> Iterable[Finding]:
    majors: Dict[str, Dict[str, str]] = {}  # component -> {cuda major: "name==version"}
    for dist in facts.frameworks.distributions:
        match = _NVIDIA_CU.match(dist.key)
        if match:
            majors.setdefault(match.group(1), {})[match.group(2)] = "%s==%s" % (dist.name, dist.version)
    all_majors = sorted({m for per in majors.values() for m in per})
    if len(all_majors) < 2:
        return
    clashing = sorted(c for c, per in majors.items() if len(per) > 1)
    wheels = sorted(v for per in majors.values() for v in per.values())
    detail = ("nvidia-* wheels for CUDA %s are installed together (%s)." % (" and ".join(all_majors), ", ".join(wheels)))
    if clashing:
        detail += (" %s exist for both majors and share one nvidia/<name>/lib folder, so one install overwrote "
                   "files of the other." % ", ".join(clashing))
    else:
        detail += " Each framework loads its own major, but a library on LD_LIBRARY_PATH or preloaded by one " \
                  "framework can be picked up by the other."
    old = [v.split("==")[0] for per in majors.values() for m, v in per.items() if m != all_majors[-1]]
    yield make_finding(
        "conflicting-packages", detail,
        title="nvidia-* wheels for CUDA %s are mixed" % " and ".join(all_majors),
        severity=Severity.ERROR if clashing else Severity.WARNING,
        evidence={"frameworks": sorted({fw.name for fw in _frameworks(facts)}), "wheels": wheels,
                  "clashing_components": clashing},
        fix=["Remove the wheels no installed framework needs, e.g. `%s uninstall -y %s`, then reinstall "
             "the framework that needs CUDA %s so its own wheels are complete." % (pip(facts), " ".join(sorted(old)),
                                                                                all_majors[-1])])


def _conda_cuda_under_wheels(facts: Facts) -> Iterable[Finding]:
    conda_cuda = [p for p in facts.frameworks.conda_packages
                  if p.name in ("cudatoolkit", "cudnn") or p.name.startswith(("cuda-cudart", "cuda-runtime",
                                                                              "libcublas", "libcudnn"))]
    wheels = facts.frameworks.nvidia_wheels()
    libs = {k: v for k, v in wheels.items() if normalize_name(k) not in ("nvidia-ml-py", "nvidia-ml-py3")}
    if not conda_cuda or not libs:
        return
    yield make_finding(
        "conflicting-packages",
        "This conda env has CUDA libraries from conda (%s) and from pip nvidia-* wheels (%s). Which copy a "
        "framework loads depends on RPATH, LD_LIBRARY_PATH and import order, so two programs in this env can "
        "load different versions." % (", ".join("%s %s" % (p.name, p.version) for p in conda_cuda),
                                      ", ".join("%s %s" % kv for kv in sorted(libs.items()))),
        title="conda CUDA packages under pip nvidia-* wheels",
        severity=Severity.WARNING,
        evidence={"frameworks": sorted({fw.name for fw in _frameworks(facts)}),
                  "conda": ["%s=%s" % (p.name, p.version) for p in conda_cuda], "wheels": libs},
        fix=["Get CUDA from one source: either `conda remove %s` (the pip wheels serve pip frameworks), or install "
             "the frameworks from conda too." % " ".join(sorted({p.name for p in conda_cuda}))])


def _pins_not_met(facts: Facts) -> Iterable[Finding]:
    bad = [p for p in facts.frameworks.pins if p.installed is not None and p.satisfied is False]
    by_framework: Dict[str, list] = {}
    for pin in bad:
        by_framework.setdefault(pin.framework, []).append(pin)
    for framework, pins in sorted(by_framework.items()):
        key = "tensorflow" if normalize_name(framework) in TF_VARIANTS else normalize_name(framework).split("-")[0]
        fw = facts.frameworks.frameworks.get(key)
        works = bool(fw and fw.live and fw.live.ops and all(op.ok for op in fw.live.ops))
        fix_pins = " ".join('"%s%s"' % (p.package, p.specifier) for p in pins)
        yield make_finding(
            "conflicting-packages",
            "%s requires %s, but %s installed. It was built and tested against the pinned versions; others can "
            "fail to load (undefined symbols) or be refused at run time.%s"
            % (framework, ", ".join(p.package + p.specifier for p in pins),
               ", ".join("%s %s is" % (p.package, p.installed) for p in pins),
               " Its GPU check passed for now." if works else ""),
            title="nvidia-* wheels at versions %s does not pin" % framework,
            severity=Severity.WARNING if works else Severity.ERROR,
            evidence={"frameworks": [key], "pins": [{"package": p.package, "required": p.specifier,
                                                     "installed": p.installed, "extra": p.extra} for p in pins]},
            fix=["%s install %s  # the versions %s pins; another package may have upgraded them"
                 % (pip(facts), fix_pins, framework)])


# -- cpu-only-build -----------------------------------------------------------------------------

def cpu_only_build(facts: Facts, prior: Prior) -> Iterable[Finding]:
    if not driver_sees_gpu(facts):
        return  # no working GPU: a CPU build is the right build (the driver layer says why)
    for fw in _frameworks(facts):
        if fw.static.build != "cpu" or not fw.static.installed:
            continue
        evidence = {"framework": fw.name, "distribution": fw.static.distribution, "version": fw.static.version,
                    "driver_cuda": cuda_version_text(driver_cuda_version(facts))}
        detail = "%s is a CPU-only build (%s), so it can never use the %d GPU(s) the driver sees." % (
            label(fw), _cpu_evidence(fw), max(len(facts.driver.nvml.gpus), facts.driver.libcuda.device_count or 0, 1))
        yield make_finding("cpu-only-build", detail, evidence=evidence, fix=cuda_build_fix(facts, fw))


def _cpu_evidence(fw: FrameworkFacts) -> str:
    if fw.name == "torch":
        return "torch/version.py: cuda = None" + (", local version +cpu" if "+cpu" in (fw.static.version or "") else "")
    if fw.name == "tensorflow":
        return "the %s distribution; build_info.py: is_cuda_build = False" % (fw.static.distribution or "tensorflow")
    if fw.name == "jax":
        return "jaxlib without a jax-cuda plugin"
    return "no CUDA in its build"


def cuda_build_fix(facts: Facts, fw: FrameworkFacts) -> List[str]:
    """The install command for a CUDA build of the same release, tailored to pip/conda."""
    version = _base_version(fw.static.version)
    driver = cuda_version_text(driver_cuda_version(facts))
    driver_note = ("This driver runs CUDA runtimes up to %s: choose a build for that CUDA or older." % driver
                   if driver else "")
    if _installed_by_conda(facts, fw):
        conda_name = {"torch": "pytorch"}.get(fw.name, fw.name)
        return ['conda install -c conda-forge "%s=*=cuda*"  # conda-forge\'s CUDA builds' % conda_name] + \
            ([driver_note] if driver_note else [])
    if fw.name == "torch":
        return _torch_cuda_fix(facts, fw, version, driver_note)
    if fw.name == "tensorflow":
        if facts.frameworks.marker_environment.get("platform_system") == "Windows":
            return ["TensorFlow 2.11 and later has no GPU build for native Windows: run it under WSL2, "
                    "or use tensorflow 2.10 with CUDA 11.2 and cuDNN 8.1."]
        removes = " ".join(sorted({d.key for d in facts.frameworks.distributions if d.key in TF_VARIANTS}))
        target = "tensorflow[and-cuda]" if compat.tensorflow_has_and_cuda(version) else "tensorflow"
        return ["%s uninstall -y %s" % (pip(facts), removes or "tensorflow-cpu"),
                '%s install "%s==%s"' % (pip(facts), target, version)] + ([driver_note] if driver_note else [])
    if fw.name == "jax":
        major = (driver or "12").split(".")[0]
        return ['%s install -U "jax[cuda%s]"  # the CUDA %s plugin and its nvidia-* wheels' % (pip(facts), major, major)]
    return [driver_note] if driver_note else []


def _torch_cuda_fix(facts: Facts, fw: FrameworkFacts, version: str, driver_note: str) -> List[str]:
    companions = [d for d in facts.frameworks.distributions if d.key in TORCH_COMPANIONS]
    from_compat = compat_torch_command(facts, version)
    uninstall = "%s uninstall -y %s" % (pip(facts), " ".join(["torch"] + [d.name for d in companions]))
    if from_compat:
        steps = [uninstall, from_compat]
        if companions:
            steps.append("Reinstall %s from the same index, at the versions that match torch %s."
                         % (", ".join(d.name for d in companions), version))
        return steps
    pins = " ".join(["torch==%s" % version] + ["%s==%s" % (d.name, _base_version(d.version)) for d in companions])
    return [uninstall,
            "%s install %s  # on Linux x86_64 the default torch wheel is a CUDA build" % (pip(facts), pins),
            "A `+cpu` wheel comes from PyTorch's CPU-only package index: check that `pip config list`, "
            "PIP_INDEX_URL and PIP_EXTRA_INDEX_URL do not point at it, or use the CUDA variant's index URL "
            "from PyTorch's install selector."] + ([driver_note] if driver_note else [])


def compat_torch_command(facts: Facts, version: str) -> Optional[str]:
    """Hook into the compat tables (gpudoctor/compat): the pip command of the newest CUDA variant of
    this torch release that the driver can run. None until the tables answer."""
    driver = facts.driver.nvml.driver_version or facts.driver.kernel.version
    if not driver:
        return None
    release = compat.torch_release(version)
    if release is None:
        return None
    ccs = {g.compute_capability for g in facts.gpus if g.compute_capability}
    # A variant the driver runs, and that carries kernels for every GPU here (never one it cannot use).
    usable = [v for v in release.variants if compat.driver_supports_cuda(driver, v.cuda)
              and all(compat.variant_runs_on(v, cc) is not False for cc in ccs)]
    if not usable:
        return None
    best = max(usable, key=lambda v: version_parts(v.cuda))
    command = with_target_pip(facts, compat.pip_command(release, best))
    return "%s  # CUDA %s, supported by driver %s" % (command, best.cuda, driver)


# -- framework-import-failed, probe-timeout, probe-crashed --------------------------------------

_SONAME_IN_TEXT = re.compile(r"(lib[A-Za-z0-9_]+\.so(?:\.[0-9]+)*)")


def import_failures(facts: Facts, prior: Prior) -> Iterable[Finding]:
    for fw in _frameworks(facts):
        live = fw.live
        if live is None:
            continue
        evidence = {"framework": fw.name, "probe": live.probe, "phase": live.phase, "seconds": live.duration_s}
        if live.status == "timeout" and not _covered(prior, "probe-timeout", live.probe):
            where = "while importing it" if live.phase in (None, "start", "import") else "during '%s'" % live.phase
            yield make_finding(
                "probe-timeout",
                "The %s probe got no answer within %.0f s, %s. Whatever the framework does at that point hangs "
                "in your programs too." % (fw.display_name, live.duration_s or 0, where),
                title="%s probe timed out (%s)" % (fw.display_name, live.phase or "start"),
                evidence=evidence, caused_by=prior.first_error("cuda-init-failed", "nvml-driver-mismatch"),
                fix=["Run `python -X importtime -c \"import %s\"` to see what hangs; a hang inside CUDA "
                     "initialisation points at the driver (`sudo dmesg | grep -i -E 'nvrm|xid'`)." % fw.name,
                     "On a slow disk or a busy machine, allow more time: `gpudoctor check --timeout 120`."])
        elif live.status in ("import-failed", "crashed") and live.phase in (None, "import"):
            yield _import_failed(facts, prior, fw, evidence)
        elif live.status in ("crashed", "failed") and live.phase not in (None, "import") \
                and not _covered(prior, "probe-crashed", live.probe):
            yield make_finding(
                "probe-crashed",
                "The %s probe died during '%s' (%s), after %s imported."
                % (fw.display_name, live.phase, live.signal or "exit without an answer", label(fw)),
                title="%s probe crashed" % fw.display_name, evidence=dict(evidence, signal=live.signal),
                caused_by=prior.first_error_for(fw.name, *GPU_ROOT_CAUSES),
                fix=["Reproduce with `python -c \"import %s\"` and the failing step; a crash inside a CUDA "
                     "library often means mismatched driver or library files." % fw.name])


def _covered(prior: Prior, code: str, probe: str) -> bool:
    """The generic probe rule (runtime_test) already reported this probe under `code`."""
    found = prior.get(code)
    if found is None:
        return False
    return probe in list(found.evidence.get("probes") or []) + [found.evidence.get("probe")]


def _import_failed(facts: Facts, prior: Prior, fw: FrameworkFacts, evidence: dict) -> Finding:
    live = fw.live
    assert live is not None
    if live.status == "crashed":
        what = "crashed the interpreter (%s)" % (live.signal or "killed")
    else:
        what = "raised %s" % (live.import_error or "an error")
    sonames = _SONAME_IN_TEXT.findall(live.import_error or "")
    cause = None
    if sonames:
        cause = prior.first_error("cudnn-missing" if any("cudnn" in s for s in sonames) else "cuda-library-missing",
                                  "cuda-library-missing", "cudnn-missing", "cuda-version-mismatch")
    fix = ["%s install --force-reinstall --no-deps %s==%s  # restore the package's own files"
           % (pip(facts), fw.static.distribution or fw.name, fw.static.version or "")] if fw.static.version else []
    if not sonames:  # a framework on a Python it has no build for fails to import: fixing the Python fixes it
        cause = prior.first_error_for(fw.name, "python-unsupported", "platform-unsupported")
    if sonames and not cause:
        fix.insert(0, "It cannot load %s: install the package that provides it (for a pip framework, the "
                      "nvidia-* wheel it pins) or put its folder on LD_LIBRARY_PATH." % ", ".join(sonames))
    tb_tail = (live.traceback or "").strip().splitlines()[-6:]
    return make_finding(
        "framework-import-failed",
        "`import %s` %s.%s" % (fw.name, what, (" Traceback ends: " + " | ".join(tb_tail)) if tb_tail else ""),
        title="%s cannot be imported" % fw.display_name,
        evidence=dict(evidence, error=live.import_error, signal=live.signal, libraries=sonames),
        caused_by=cause, fix=fix)


# -- framework-gpu-not-detected -----------------------------------------------------------------

def gpu_not_detected(facts: Facts, prior: Prior) -> Iterable[Finding]:
    for fw in _frameworks(facts):
        live = fw.live
        if live is None or not live.import_ok or live.gpu_available:
            continue
        if not _is_gpu_build(fw):
            continue
        cause = prior.first_error_for(fw.name, *GPU_ROOT_CAUSES)
        if cause is None and not driver_sees_gpu(facts):
            continue  # "built with CUDA, no driver": a CPU machine, or the driver layer already said why
        yield make_finding(
            "framework-gpu-not-detected", _not_detected_detail(facts, fw),
            title="%s does not see the GPU" % fw.display_name,
            evidence={"framework": fw.name, "cuda_build": fw.static.cuda_version or live.cuda_version,
                      "cuda_init_error": live.cuda_init_error,
                      "log": [ln.text for ln in live.log_lines if ln.kind != "other"][:8]},
            caused_by=cause,
            fix=(["Fix %s first (above): it is why %s sees no GPU." % (cause, fw.display_name)] if cause
                 else (tensorflow_cuda_fix(fw, facts, []) if fw.name == "tensorflow" else []) or ["Reinstall the CUDA build: `%s install --force-reinstall %s==%s`"
                                                  % (pip(facts), fw.static.distribution or fw.name,
                                                     fw.static.version or "")]))


def _is_gpu_build(fw: FrameworkFacts) -> bool:
    if fw.live is not None and fw.live.built_with_cuda:
        return True
    return fw.static.build in ("cuda", "rocm")


def _not_detected_detail(facts: Facts, fw: FrameworkFacts) -> str:
    live = fw.live
    assert live is not None
    seen = "the driver sees %d GPU(s)" % max(len(facts.driver.nvml.gpus), facts.driver.libcuda.device_count or 0) \
        if driver_sees_gpu(facts) else "the GPU is not usable below it"
    text = "%s is a CUDA %s build, but it lists no GPU, while %s." % (
        label(fw), fw.static.cuda_version or live.cuda_version or "", seen)
    if live.cuda_init_error:
        text += " It says: %s" % live.cuda_init_error.strip().splitlines()[0]
    missing = [ln.library for ln in live.log_lines if ln.kind == "dlopen-failed"]
    if missing:
        text += " It could not load: %s." % ", ".join(str(m) for m in missing)
    return text


# -- runtime: cuDNN acceptance and the tiny ops -------------------------------------------------

def cudnn_unacceptable(facts: Facts, prior: Prior) -> Iterable[Finding]:
    for fw in _frameworks(facts):
        if not fw.live or fw.live.cudnn_acceptable is not False:
            continue
        pin = next((p for p in facts.frameworks.pins if "cudnn" in p.package), None)
        yield make_finding(
            "cudnn-unacceptable",
            "%s loaded cuDNN %s and torch.backends.cudnn.is_acceptable() refuses it on a CUDA tensor."
            % (label(fw), fw.live.cudnn_version or "(unknown version)"),
            evidence={"framework": fw.name, "cudnn": fw.live.cudnn_version,
                      "loaded": [p for p in fw.live.loaded_libraries if "cudnn" in p]},
            caused_by=prior.first_error("cudnn-version-mismatch", "cudnn-missing", "multiple-cuda-installs"),
            fix=(["%s install \"%s%s\"  # the cuDNN wheel torch pins" % (pip(facts), pin.package, pin.specifier)]
                 if pin else []) + ["Make sure no other libcudnn on LD_LIBRARY_PATH is loaded first "
                                    "(see the loaded paths in the evidence)."])


def gpu_ops(facts: Facts, prior: Prior) -> Iterable[Finding]:
    for fw in _frameworks(facts):
        for op in fw.live.ops if fw.live else []:
            evidence = {"framework": fw.name, "op": op.name, "device": op.device, "seconds": op.seconds}
            if not op.ran or op.placement_verified is False:
                yield make_finding(
                    "gpu-op-failed", "A tiny %s on the GPU failed in %s: %s" % (op.name, label(fw), op.error),
                    title="%s: a tiny GPU %s failed" % (fw.display_name, op.name),
                    evidence=dict(evidence, error=op.error),
                    caused_by=prior.first_error_for(fw.name, *GPU_ROOT_CAUSES),
                    fix=["Read the error: 'no kernel image is available' means the build lacks this GPU's "
                         "architecture; 'out of memory' means the GPU is full; CUBLAS/CUDNN_STATUS errors point at "
                         "those libraries' versions."])
            elif op.ok is False:
                yield make_finding(
                    "gpu-op-wrong-result",
                    "A tiny %s in %s on %s differs from the CPU by up to %s (tolerance %s)."
                    % (op.name, label(fw), op.device, op.max_abs_error, op.tolerance),
                    title="%s: the GPU %s gave a wrong result" % (fw.display_name, op.name),
                    evidence=dict(evidence, max_abs_error=op.max_abs_error, tolerance=op.tolerance,
                                  placement_verified=op.placement_verified),
                    fix=["Update the NVIDIA driver; if it persists, check the GPU's health: "
                         "`nvidia-smi -q -d ECC,PAGE_RETIREMENT` and `sudo dmesg | grep -i xid`."])


RULES = [conflicting_packages, cpu_only_build, import_failures, gpu_not_detected,
         cudnn_unacceptable, gpu_ops]
