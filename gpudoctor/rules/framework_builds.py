"""Compatibility rules for installed framework builds: driver, GPU architecture, Python, platform.

Every version in these findings comes from the facts or the compat tables, never from here.
"""

from __future__ import annotations

import os
from typing import Iterable, List, Optional, Tuple

from .. import compat
from ..codes import make_finding
from ..compat.versions import is_dotted, major_minor, vkey
from ..facts import Facts
from ..facts.driver import NvmlGpu
from ..facts.frameworks import FrameworkFacts
from ..facts.libraries import LibraryCopy
from ..model import Finding
from .base import Prior
from .framework_facts import cuda_builds, installed_frameworks, label
from .gpu_generations import build_blocked_on, driver_upgrade_steps, wheels_of_major
from .situation import any_gpu, cuda_version_text, driver_cuda_version, driver_version, host_driver_fix, pip, with_target_pip

def torch_variant(fw: FrameworkFacts) -> Tuple[Optional[compat.TorchRelease], Optional[compat.TorchVariant]]:
    """The PyTorch release and CUDA variant installed: "+cu124" names it; a plain version is the
    default variant of PyPI's wheel."""
    release = compat.torch_release(fw.static.version)
    if release is None:
        return None, None
    suffix = fw.static.version.partition("+")[2]
    return release, release.variant(suffix or release.default_variant or "")


def _newest_build_step(fw: FrameworkFacts, facts: Facts, compute_capability: Optional[str] = None) -> Optional[str]:
    version = driver_version(facts)
    if not version:
        return None
    python = facts.system.python_version
    if fw.name == "torch":
        build = (compat.newest_torch_with_kernels(version, compute_capability, python) if compute_capability
                 else compat.newest_torch_for(version, python))
        installed_release, installed_variant = torch_variant(fw)
        if build and installed_release and installed_release.version == build.version and installed_variant \
                and installed_variant.name == build.variant:
            return None  # the build it has: what the tables say of it is contradicted by the machine
        if build:
            return f"Or install PyTorch {build.version} ({build.variant}), the newest build this machine runs: {with_target_pip(facts, build.command)}"
    if fw.name == "tensorflow" and compute_capability is None:
        tf = compat.newest_tensorflow_for(version, python)
        if tf:
            return f"Or install TensorFlow {tf.version} (CUDA {tf.cuda}), the newest release this driver runs: {with_target_pip(facts, tf.command)}"
    return None


def framework_driver_too_old(facts: Facts, prior: Prior) -> Iterable[Finding]:
    version = driver_version(facts)
    if not version or not any_gpu(facts) or prior.first_error("driver-too-old", "driver-not-loaded"):
        return  # the CUDA-libraries rule already named the runtime that cannot run, or no driver at all
    for fw in cuda_builds(facts):
        cuda = fw.static.cuda_version
        if not cuda or not is_dotted(cuda) or compat.driver_supports_cuda(version, major_minor(cuda)) is not False:
            continue
        if facts.gpus and len(build_blocked_on(facts, cuda)) == len(facts.gpus):
            continue  # gpu-arch-unsupported names it: no driver makes this build run on these GPUs
        need = compat.min_driver_for_cuda(major_minor(cuda))
        minimum = need and (need.minor_version_compat_driver or need.toolkit_driver)
        detail = (f"{label(fw)} was built for CUDA {cuda}; it needs NVIDIA driver {minimum or 'newer'} or newer, but this "
                  f"machine has driver {version} (CUDA {cuda_version_text(driver_cuda_version(facts)) or '?'}). "
                  f"Its CUDA calls fail with 'CUDA driver version is insufficient for CUDA runtime version' (error 35), "
                  f"so {fw.display_name} cannot use the GPU.")
        fix = host_driver_fix(facts) + driver_upgrade_steps(
            facts, minimum, f"Upgrade the NVIDIA driver to {minimum} or newer, then reboot."
            if minimum else "Upgrade the NVIDIA driver, then reboot.")
        newest = _newest_build_step(fw, facts)
        if newest:
            fix.append(newest)
        yield make_finding("driver-too-old", detail, fix=fix, evidence={
            "framework": fw.name, "version": fw.static.version, "built_for_cuda": cuda, "driver": version,
            "needed_driver": minimum})


def _arch_list(fw: FrameworkFacts) -> Tuple[List[str], str]:
    """The build's arch list: what the framework says live, else its build files, else the tables."""
    live = fw.live
    if live is not None and live.arch_list:
        return list(live.arch_list), "torch.cuda.get_arch_list()"
    if fw.static.cuda_compute_capabilities:
        return list(fw.static.cuda_compute_capabilities), fw.static.details.get("arch_source") or "build_info.py"
    if fw.name == "torch":
        _, variant = torch_variant(fw)
        if variant is not None and variant.arch_list:
            return list(variant.arch_list), f"compat table ({variant.arch_source or variant.source})"
    return [], ""


def gpu_arch_unsupported(facts: Facts, prior: Prior) -> Iterable[Finding]:
    for fw in cuda_builds(facts):
        entries, where = _arch_list(fw)
        blocked = build_blocked_on(facts, fw.static.cuda_version)
        gpus = [g for g in facts.gpus if g.compute_capability
                and compat.arch_entries_run_on(entries, g.compute_capability) is False] if entries else []
        # A CUDA whose toolkits no longer target a retired GPU generation is the deeper cause, whatever the
        # arch list says: it explains why no driver helps, and which wheels to remove.
        if blocked and (not entries or (gpus and _retired(blocked, fw.static.cuda_version))):
            yield _generation_finding(fw, facts, blocked, entries)
        elif gpus:
            yield _arch_finding(fw, facts, gpus, entries, where)
        elif not entries and (below := _below_supported_range(fw, facts)):
            yield _arch_finding(fw, facts, below, [], "")
        else:
            yield from _library_arch_findings(fw, facts)


def _below_supported_range(fw: FrameworkFacts, facts: Facts) -> List[NvmlGpu]:
    """GPUs below the compute capability range a torch variant with no sourced arch list supports."""
    if fw.name != "torch":
        return []
    _, variant = torch_variant(fw)
    if variant is None or not variant.capability_range:
        return []
    return [g for g in facts.gpus if g.compute_capability and compat.variant_runs_on(variant, g.compute_capability) is False]


def _loaded_copy(facts: Facts, family: str, soname: str) -> Optional[LibraryCopy]:
    """The copy of a library the loader gives this soname: the dlopen child's answer, else the first found."""
    lib = facts.libraries.library(family)
    if lib is None:
        return None
    resolved = next((r.real_path for r in lib.loader_resolution if r.soname == soname and r.real_path), None)
    copies = [c for c in lib.copies if c.soname == soname]
    return next((c for c in copies if c.real_path == resolved), copies[0] if copies else None)


def _library_arch_findings(fw: FrameworkFacts, facts: Facts) -> Iterable[Finding]:
    """The framework's build has kernels for the GPU (or says nothing), but a math library it loads
    (cuBLAS, cuDNN) has none: its GEMMs and convolutions still fail on this GPU."""
    for need in fw.static.sonames:
        copy = _loaded_copy(facts, need.library, need.soname)
        if copy is None or not copy.archs:
            continue
        gpus = [g for g in facts.gpus if g.compute_capability
                and compat.arch_entries_run_on(copy.archs, g.compute_capability) is False]
        if not gpus:
            continue
        listing = ", ".join(f"GPU {g.index} {g.name or ''} (compute capability {g.compute_capability})" for g in gpus)
        detail = (f"{label(fw)} loads {copy.real_path} ({need.soname}{' ' + copy.version if copy.version else ''}), "
                  f"whose fat binaries carry {' '.join(copy.archs)} and nothing that runs on {listing}: its "
                  f"{need.library} calls fail with 'no kernel image is available' or {need.library.upper()}_STATUS "
                  "errors (read from the library's .nv_fatbin headers).")
        step = _newest_build_step(fw, facts, gpus[0].compute_capability)
        fix = [f"Give {fw.display_name} a {need.library} built for this GPU: the one its own build pins or bundles "
               f"(remove {os.path.dirname(copy.path)} from LD_LIBRARY_PATH if it shadows that one)."]
        if step:
            fix.append(step)
        yield make_finding("gpu-arch-unsupported", detail, fix=fix, evidence={
            "framework": fw.name, "version": fw.static.version, "library": copy.real_path, "arch_list": list(copy.archs),
            "read_from": list(copy.archs_from),
            "gpus": [{"index": g.index, "name": g.name, "compute_capability": g.compute_capability} for g in gpus]})
        return  # one finding per framework: the first library that cannot run says it


def _retired(blocked: List[Tuple[NvmlGpu, Optional[compat.GpuCeiling]]], cuda: Optional[str]) -> bool:
    """Whether the first blocked GPU's architecture ended before this CUDA major (not: is too new for it)."""
    gen = compat.gpu_generation(blocked[0][0].compute_capability or "")
    return bool(gen and gen.last_cuda_major is not None and cuda and is_dotted(cuda)
                and compat.versions.major(cuda) > gen.last_cuda_major)


def _generation_finding(fw: FrameworkFacts, facts: Facts, blocked: List[Tuple[NvmlGpu, Optional[compat.GpuCeiling]]],
                        entries: List[str]) -> Finding:
    """A build for a CUDA whose toolkit no longer (or not yet) targets these GPUs' architecture."""
    cuda = fw.static.cuda_version or "?"
    gpu, ceiling = blocked[0]
    listing = ", ".join(f"GPU {g.index} {g.name or ''} (compute capability {g.compute_capability})" for g, _ in blocked)
    gen = compat.gpu_generation(gpu.compute_capability or "")
    arch = gen.architecture if gen else "this"
    if gen is not None and gen.last_cuda_major is not None and compat.versions.major(cuda) > gen.last_cuda_major:
        why = (f"CUDA {compat.versions.major(cuda)} toolkits no longer build for {arch} GPUs: their last toolkit is "
               f"CUDA {gen.last_cuda_major}.x and their last driver branch R{gen.last_driver_branch} (NVIDIA's architecture matrix)")
    else:
        why = f"{arch} GPUs need CUDA {gen.first_cuda if gen else '?'} or newer (NVIDIA's architecture matrix)"
    carries = f" (its kernels: {' '.join(entries)})" if entries else ""
    detail = (f"{label(fw)} was built for CUDA {cuda}, which cannot carry kernels for {listing}{carries}: {why}. Its GPU work fails "
              "with 'no kernel image is available for execution on the device' (or the build refuses the GPU as too old); "
              "no driver upgrade changes that.")
    fix: List[str] = []
    step = _newest_build_step(fw, facts, gpu.compute_capability)
    if step:
        fix.append(step.replace("Or install", "Install", 1))
    else:
        fix.append(_no_build_statement(fw, gpu, ceiling))
    wheels = wheels_of_major(facts, str(compat.versions.major(cuda))) if is_dotted(cuda) else []
    if wheels:
        fix.append(f"Remove the CUDA {compat.versions.major(cuda)} libraries this build brought (no driver for this "
                   f"GPU runs them): `{pip(facts)} uninstall -y {' '.join(wheels)}`")
    return make_finding("gpu-arch-unsupported", detail, fix=fix, evidence={
        "framework": fw.name, "version": fw.static.version, "built_for_cuda": cuda,
        "architecture": arch, "arch_list": entries or None, "last_cuda_major": gen.last_cuda_major if gen else None,
        "last_driver_branch": gen.last_driver_branch if gen else None, "source": gen.source if gen else None,
        "gpus": [{"index": g.index, "name": g.name, "compute_capability": g.compute_capability} for g, _ in blocked]})


def _no_build_statement(fw: FrameworkFacts, gpu: NvmlGpu, ceiling: Optional[compat.GpuCeiling]) -> str:
    """The honest answer when the tables know no build with kernels for this GPU."""
    cc = gpu.compute_capability
    if ceiling is None or ceiling.last_cuda_major is None:
        return (f"No {fw.display_name} build in gpudoctor's tables is known to carry kernels for compute capability {cc}; "
                "use a build for a CUDA version that supports this GPU.")
    return (f"No {fw.display_name} build in gpudoctor's tables is known to carry kernels for compute capability {cc}: "
            f"it needs a build for CUDA {ceiling.last_cuda_major}.x (up to {ceiling.newest_cuda} on driver branch "
            f"R{ceiling.last_driver_branch}) that still includes sm_{cc.replace('.', '')}; check its release notes, or "
            f"build it from source with CUDA {ceiling.last_cuda_major}.x"
            + (f" and TORCH_CUDA_ARCH_LIST={cc}." if fw.name == "torch" else f" for compute capability {cc}."))


def _arch_finding(fw: FrameworkFacts, facts: Facts, gpus: List[NvmlGpu], entries: List[str], where: str) -> Finding:
    listing = ", ".join(f"GPU {g.index} {g.name or ''} (compute capability {g.compute_capability})" for g in gpus)
    newest_cc = max(vkey(g.compute_capability) for g in gpus)
    if entries:
        detail = (f"{label(fw)} carries kernels for {' '.join(entries)} ({where}), none of which runs on {listing}: "
                  "no SASS for that architecture and no older PTX to JIT-compile. Work on it fails with 'no kernel "
                  "image is available for execution on the device'.")
    else:  # no sourced list: the release's own supported range rules these GPUs out
        variant = torch_variant(fw)[1]
        low, high = variant.capability_range if variant else ("?", "?")
        detail = (f"{label(fw)} supports compute capability {low} to {high} only (CUDA_ARCHES_SUPPORTED in that "
                  f"release's own torch/cuda/__init__.py, from gpudoctor's compat table), and {listing} is below it: the build has "
                  "no kernels for it. torch warns that it no longer supports this GPU, and work on it fails with "
                  "'no kernel image is available for execution on the device'.")
    fix: List[str] = []
    step = _newest_build_step(fw, facts, gpus[0].compute_capability)
    if step:
        fix.append(step.replace("Or install", "Install", 1))
    elif fw.name == "torch":
        fix.append(f"No PyTorch build in gpudoctor's tables is known to support compute capability "
                   f"{'.'.join(map(str, newest_cc))}; check PyTorch's release notes for the builds that include it "
                   "(or build from source with TORCH_CUDA_ARCH_LIST set for it).")
    else:
        fix.append(f"{fw.display_name} publishes one GPU build per release: use a release built for this GPU, "
                   "or build from source for its compute capability.")
    variant = None if entries else torch_variant(fw)[1]
    return make_finding("gpu-arch-unsupported", detail, fix=fix, evidence={
        "framework": fw.name, "version": fw.static.version, "arch_list": entries,
        **({"capability_range": list(variant.capability_range), "source": variant.capability_range_source}
           if variant else {}),
        "gpus": [{"index": g.index, "name": g.name, "compute_capability": g.compute_capability} for g in gpus]})


def _supported_pythons(fw: FrameworkFacts) -> Tuple[str, ...]:
    if fw.name == "torch":
        release = compat.torch_release(fw.static.version)
        return release.python if release else ()
    if fw.name == "tensorflow":
        release = compat.tensorflow_release(fw.static.version)
        return release.python if release else ()
    return ()


def _newest_release_for_python(fw: FrameworkFacts, python: str) -> Optional[str]:
    if fw.name == "tensorflow":
        series = [s for s in compat.tensorflow_series() if python in (compat.tensorflow_release(s).python or ())]
        return max(series, key=vkey) if series else None
    if fw.name == "torch":
        releases = [r.version for r in compat.tables().torch if python in r.python]
        return max(releases, key=vkey) if releases else None
    return None


def _gpu_release_for_python(fw: FrameworkFacts, facts: Facts, python: str) -> Optional[str]:
    """For a GPU build on a GPU machine: the newest release for this Python that this driver runs ('' when
    the tables know none); None when the question does not apply (CPU build, no driver, other framework)."""
    driver = driver_version(facts)
    if fw.static.build != "cuda" or not driver or not any_gpu(facts) or fw.name not in ("torch", "tensorflow"):
        return None
    if fw.name == "tensorflow":
        tf = compat.newest_tensorflow_for(driver, python)
        return (f"Or install a release built for Python {python} that driver {driver} runs: "
                f"`{with_target_pip(facts, tf.command)}`") if tf else ""
    build = compat.newest_torch_for(driver, python)
    return (f"Or install a release built for Python {python} that driver {driver} runs: "
            f"`{with_target_pip(facts, build.command)}`") if build else ""


def python_unsupported(facts: Facts, prior: Prior) -> Iterable[Finding]:
    python = facts.system.python_version
    if not python or not is_dotted(python):
        return
    current = major_minor(python)
    for fw in installed_frameworks(facts):
        supported = _supported_pythons(fw)
        if not supported or current in supported:
            continue
        newest = _newest_release_for_python(fw, current)
        fix = [f"Use Python {' or '.join(supported)} for {label(fw)} (a new venv or conda env: "
               f"`conda create -n {fw.name}-env python={supported[-1]}`)."]
        gpu_step = _gpu_release_for_python(fw, facts, current)
        if gpu_step is not None:  # a GPU build: the other release must also run on this driver
            fix.append(gpu_step or f"No {fw.display_name} release for Python {current} in gpudoctor's tables runs "
                                   f"on driver {driver_version(facts)}: the Python above is the way that keeps the GPU.")
        elif newest:
            package = "tensorflow" if fw.name == "tensorflow" else "torch"
            fix.append(f"Or install a release built for Python {current}: `{pip(facts)} install \"{package}=={newest}.*\"`"
                       if fw.name == "tensorflow" else
                       f"Or install a release built for Python {current}: `{pip(facts)} install \"{package}=={newest}\"`")
        yield make_finding("python-unsupported",
                           f"{label(fw)} supports Python {', '.join(supported)}; this environment runs Python {python}. "
                           "Its compiled parts may fail to import or misbehave.",
                           fix=fix, evidence={"framework": fw.name, "version": fw.static.version,
                                              "python": python, "supported": list(supported)})


def platform_unsupported(facts: Facts, prior: Prior) -> Iterable[Finding]:
    system = facts.system.os
    for fw in installed_frameworks(facts):
        if (system == "Windows" and fw.name == "tensorflow" and is_dotted(fw.static.version.split("+")[0])
                and vkey(major_minor(fw.static.version)) >= (2, 11) and any_gpu(facts)):
            yield make_finding(
                "platform-unsupported",
                f"{label(fw)} has no GPU support on native Windows (TensorFlow 2.10 was the last release with it); "
                "it runs on the CPU here.",
                evidence={"os": system, "framework": fw.name, "version": fw.static.version},
                fix=["Use TensorFlow in WSL2 (`wsl --install`, then `pip install \"tensorflow[and-cuda]\"` inside "
                     "the Linux distribution), or `pip install \"tensorflow<2.11\"` on native Windows."])
        elif system == "Darwin" and fw.static.build == "cuda":
            yield make_finding(
                "platform-unsupported", f"{label(fw)} is a CUDA build, but CUDA does not run on macOS.",
                evidence={"os": system, "framework": fw.name, "version": fw.static.version},
                fix=[f"Install the macOS build of {fw.display_name} (Apple GPUs are used through Metal/MPS)."])


RULES = [gpu_arch_unsupported, framework_driver_too_old, python_unsupported, platform_unsupported]
