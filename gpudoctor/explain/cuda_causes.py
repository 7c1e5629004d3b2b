"""The CUDA libraries a log says are missing: one cause per CUDA version, with what the log says was found.

TensorFlow 1.14 on a machine with only CUDA 10.1 logs six "Could not dlopen library" lines
(libcudart, libcublas, libcufft, libcurand, libcusolver, libcusparse .so.10.0): one cause, the CUDA
10.0 libraries are not there. This module folds such findings into one, names what the log shows
was found instead (LD_LIBRARY_PATH of the dlerror line, libraries that did load, conda's
cudatoolkit, the toolkit collect_env or nvcc saw) and writes the install steps of the era.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import compat
from ..causes import one_finding_per_cause
from ..codes import CATALOG, make_finding
from ..compat.versions import major_minor, vkey
from ..fixes import CUDA_COMPONENTS, cuda_install_steps, known_pip, pip_wheel
from ..model import Finding, Severity

LIBRARY_CODES = ("cuda-library-missing", "cudnn-missing")
UNNAMED_LIBRARIES = "tf-cannot-dlopen-gpu-libraries"
# Signatures whose message means "the program asked for this soname and the loader did not find it".
LOADER_SIGNATURES = ("tf-dso-loader-missing", "tf-dso-loader-quoted", "shared-object-missing", "cannot-find-library",
                     "unable-to-load-any-of", "cudnn-sublib-missing", "ctranslate2-library-not-found")
NOT_TOOLKIT = ("cudnn", "nccl", "")
# CUPTI's CUDA 11 sonames change with each minor (libcupti.so.11.4) while only 11.8's ships as a wheel: no route
# is named for it, its own fix (sonames.toml) says where the toolkit keeps it
NO_INSTALL_ROUTE = ("cupti",)
_CUDA_IN_PATH = re.compile(r"cuda[-_/]?v?(\d+\.\d+)", re.IGNORECASE)
_CUDART = re.compile(r"^libcudart\.so\.(\d+\.\d+)$")


# -- what the log says was found ----------------------------------------------------------------

def found_cuda(facts: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(CUDA major.minor, where the log shows it) for every CUDA the log says is installed."""
    out: List[Tuple[str, str]] = []
    for folder in str(facts.get("ld_library_path") or "").split(":"):
        m = _CUDA_IN_PATH.search(folder)
        if m:
            out.append((m.group(1), f"{folder} on LD_LIBRARY_PATH"))
    for soname in as_list(facts.get("loaded")):
        m = _CUDART.match(soname)
        if m:
            out.append((m.group(1), f"{soname}, which the program loaded"))
    if facts.get("env_cudatoolkit"):
        out.append((str(facts["env_cudatoolkit"]), f"conda's cudatoolkit {facts['env_cudatoolkit']}"))
    for wheel in as_list(facts.get("runtime_wheel")):
        m = re.match(r"nvidia-cuda-runtime(?:-cu\d+)?[\s(=]*(\d+\.\d+)", wheel)
        if m:
            out.append((m.group(1), f"the pip wheel {wheel.split()[0].split('=')[0]} {m.group(1)}"))
    if facts.get("cuda_found"):
        out.append((str(facts["cuda_found"]), "the CUDA toolkit the log reports (collect_env or nvcc)"))
    for pin in as_list(facts.get("conda_cuda_pin")):
        name, _, version = pin.partition("=")
        out.append((version, f"conda's {name}={version} in this environment"))
    if facts.get("cuda_image"):
        out.append((str(facts["cuda_image"]), f"the nvidia/cuda:{facts['cuda_image']} image the program runs in"))
    if facts.get("cuda_stated"):
        out.append((major_minor(str(facts["cuda_stated"])), "the CUDA version the report states"))
    seen, unique = set(), []
    for version, where in out:
        if (version, where) not in seen:
            seen.add((version, where))
            unique.append((version, where))
    return unique


def as_list(value: Any) -> List[str]:
    """A fact's values as strings: facts read by collecting signatures are lists, the others one value."""
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def env_kind(facts: Dict[str, Any]) -> Optional[str]:
    """'conda' when the log shows a conda environment, None when it does not say."""
    return "conda" if facts.get("conda_env") or facts.get("env_cudatoolkit") else None


def driver_note(cuda: str, facts: Dict[str, Any]) -> List[str]:
    """What the log says about the driver and the GPU, where they cannot run CUDA `cuda` at all: then
    installing its libraries is not enough (and a GPU too old for it can take no driver that would be)."""
    cc, driver_cuda = facts.get("compute_capability"), facts.get("driver_cuda")
    archs = compat.cuda_build_archs(cuda) if "." in cuda else None
    if cc and archs is not None and archs.can_build_for(str(cc)) is False:
        return [f"Note: this GPU (compute capability {cc}) is older than CUDA {cuda} supports (from "
                f"{archs.min_compute_capability}): no driver makes it run; use a build for an older CUDA."]
    if driver_cuda and vkey(cuda)[:1] > vkey(str(driver_cuda))[:1]:
        return [f"Note: the driver in this log supports CUDA up to {driver_cuda} (nvidia-smi); CUDA {cuda} also "
                "needs a newer driver, or use a build for the CUDA the driver supports."]
    return []


# -- install steps for one missing library ------------------------------------------------------

def _cudnn_wheels(major: str) -> List[str]:
    """nvidia-cudnn-cuXX=={major}.* for every CUDA major whose wheel has that cuDNN major."""
    out = []
    for cu in (11, 12, 13):
        versions = known_pip().get(f"nvidia-cudnn-cu{cu}", {}).get("versions") or []
        if any(v.split(".")[0] == major for v in versions):
            out.append(f'"nvidia-cudnn-cu{cu}=={major}.*"')
    return out


def _cudnn_steps(major: str, cuda: Optional[str]) -> List[str]:
    wheels = _cudnn_wheels(major)
    cu = str(cuda).split(".")[0] if cuda else ""
    chosen = [w for w in wheels if f"-cu{cu}=" in w] or wheels
    steps = [f'`conda install "cudnn={major}"` in a conda env (conda\'s cuDNN {major}).']
    if not chosen:
        return steps + [f"cuDNN {major} has no pip wheel: NVIDIA's cuDNN {major} archive for your CUDA version."]
    others = f" (or {', '.join(chosen[1:])} for another CUDA major)" if len(chosen) > 1 else ""
    return steps + [f"`pip install {chosen[0]}`{others}: NVIDIA's cuDNN {major} wheel."]


def _steps_without_cuda_version(library: str, major: str) -> List[str]:
    """The soname does not say which CUDA it belongs to (libcufft.so.10 is CUDA 10.1 to 11.x): name the
    routes, not a package that may be of the wrong era."""
    if library == "nccl":
        wheels = [w for w in (pip_wheel("nccl", 12), pip_wheel("nccl", 11)) if w]
        return [f"`pip install {wheels[0]}` (or {wheels[1]} for a CUDA 11 build), or `conda install -c conda-forge nccl`."]
    if not library or library == "cudnn":
        return []
    wheel = CUDA_COMPONENTS.get(library, (library.lower(), "", False))[0]
    known = f" (its {library} major is {major})" if major else ""
    return [f"Install the {library} of the CUDA version the program was built for{known}: NVIDIA's "
            f"nvidia-{wheel}-cuXX wheel for a CUDA 11+ build, conda's cudatoolkit "
            "(CUDA <= 11.8) or lib* packages with cuda-version (CUDA 12+), or the CUDA toolkit."]


def library_install_steps(ev: Dict[str, Any], facts: Dict[str, Any]) -> List[str]:
    """How to install the library of one finding, by era; [] when the log does not tell enough."""
    library, major = ev.get("library") or "", str(ev.get("major") or "")
    if library in NO_INSTALL_ROUTE:
        return []
    cuda = ev.get("cuda_version") or facts.get("tf_cuda") or facts.get("torch_cuda")
    if str(cuda).lower() == "none":  # "CUDA used to build PyTorch: None": a CPU build
        cuda = None
    if library == "cudnn" and major.isdigit():
        return _cudnn_steps(major, cuda)
    if library in NOT_TOOLKIT or not cuda:
        return _steps_without_cuda_version(library, major)
    return cuda_install_steps(str(cuda), [library], env_kind(facts)) + driver_note(str(cuda), facts)


# -- one finding per missing CUDA version -------------------------------------------------------

def _cuda_key(f: Finding) -> Optional[str]:
    """The CUDA major a missing library belongs to ("10", "11"), "" when its soname does not say."""
    ev = f.evidence
    if f.code not in LIBRARY_CODES or ev.get("signature") not in LOADER_SIGNATURES or not ev.get("library"):
        return None
    if ev.get("wanted") and ev.get("wanted") != ev.get("soname"):
        return None  # a dependency of the library asked for (libcusolver.so.11 needs libnvJitLink.so.12): its own cause
    return str(ev.get("cuda_version") or "").split(".")[0]


def merge_missing_libraries(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    """The libraries of one CUDA major (plus cuDNN and the math libraries the log names without a
    CUDA version, when only one CUDA major is missing) become one finding, worded as that cause."""
    majors = {k for k in (_cuda_key(f) for f in findings) if k}
    only = next(iter(majors)) if len(majors) == 1 else None

    def cause_of(f: Finding) -> Optional[str]:
        key = _cuda_key(f)
        if key is None or not (key or only):
            return None
        return f"cuda:{key or only}"

    def merge(key: str, members: List[Finding]) -> Finding:
        versions = [str(m.evidence.get("cuda_version")) for m in members if m.evidence.get("cuda_version")]
        cuda = max(versions, key=len) if versions else key[5:]  # the most precise: 11.0 over 11
        if len(members) == 1 and not [v for v, _ in found_cuda(facts) if v != cuda]:
            return members[0]  # one library, nothing else found: its own finding says it best
        return _merged(cuda, members, facts)

    return one_finding_per_cause(findings, cause_of, merge, merge_single=True)


def torch_build_cudnn(facts: Dict[str, Any]) -> Optional[Tuple[str, str]]:
    """(torch build, cuDNN) for a torch version with its CUDA tag in the log ('2.0.0+cu118'): the cuDNN that
    build bundles, from compat/pytorch.toml; None when the tag or the release is not in the tables."""
    version = str(facts.get("torch_version") or "")
    if "+cu" not in version:
        return None
    release = compat.torch_release(version.split("+")[0])
    variant = release.variant(version.split("+")[1]) if release else None
    return (version, variant.cudnn) if variant and variant.cudnn else None


def reread_cudnn_major(findings: List[Finding], facts: Dict[str, Any]) -> List[Finding]:
    """A missing cuDNN of one major where the log says another major is installed (libcudnn_ops_infer.so.8
    missing, 'I have installed cudnn-9.2', or a torch+cu118 that bundles cuDNN 8 next to a library that wants
    libcudnn_ops.so.9): the installed cuDNN is the wrong major, not absent."""
    listed = as_list(facts.get("ldconfig_cudnn"))  # the majors `ldconfig -p` lists
    torch_cudnn = torch_build_cudnn(facts)
    out = []
    for f in findings:
        wanted = str(f.evidence.get("major") or _cudnn_dll_major(f) or "")
        stated = str(facts.get("cudnn_stated") or facts.get("env_cudnn")
                     or (max(listed, key=int) if listed and wanted not in listed else "")
                     or (torch_cudnn[1] if torch_cudnn else ""))
        if (f.code not in ("cudnn-missing", "dll-load-failed") or not stated or not wanted.isdigit()
                or stated.split(".")[0] == wanted):
            out.append(f)
            continue
        renamed = (" (cuDNN 9 split libcudnn_ops_infer/cnn_infer into other libraries)"
                   if stated.startswith("9") and wanted == "8" else "")
        said = facts.get("cudnn_stated") or facts.get("env_cudnn")
        from_torch = not (said or listed)  # only the torch build in the log says which cuDNN is there
        seen = (f"the log says cuDNN {stated} is installed" if said
                else f"the loader cache (ldconfig -p) lists cuDNN {stated} only" if listed
                else f"the torch {torch_cudnn[0]} in the log bundles cuDNN {stated} (compat/pytorch.toml)")
        names = f"cudnn64_{wanted}.dll" if str(f.evidence.get("soname", "")).endswith(".dll") else f".so.{wanted}"
        detail = (f"The program needs cuDNN {wanted} ({f.evidence.get('soname')}), and {seen}: each cuDNN major has its "
                  f"own file names ({names}){renamed}, so the program cannot "
                  f"use another major.")
        wheel = (" (pip: `pip install \"nvidia-cudnn-cu12<9\"` in its environment, CUDA 11 builds: nvidia-cudnn-cu11)"
                 if wanted == "8" else "")
        fix = [f"Install cuDNN {wanted} next to it for this program{wheel}, or your distribution's cuDNN {wanted} "
               f"package; or use a release of the program built for cuDNN {stated.split('.')[0]}."]
        if from_torch:  # the cuDNN comes with torch: the two packages must agree on one major
            fix.append(f"Or pair the two packages on one cuDNN major: a torch release whose build bundles cuDNN {wanted} "
                       f"(`gpudoctor compat torch VERSION` lists each build's cuDNN), or the other package's release "
                       f"built for cuDNN {stated.split('.')[0]}.")
        out.append(replace(make_finding("cudnn-version-mismatch", detail, fix=fix,
                                        evidence={**f.evidence, "cudnn_stated": stated, "reread_from": f.code},
                                        title=(f"torch {torch_cudnn[0]} brings cuDNN {stated}" if from_torch
                                               else f"cuDNN {stated} is installed")
                                        + f"; the program needs cuDNN {wanted}"),
                           caused_by=f.caused_by))
    return out


_CUDNN_DLL = re.compile(r"^cudnn(?:64)?_(\d+)\.dll$", re.IGNORECASE)


def _cudnn_dll_major(f: Finding) -> Optional[str]:
    """The cuDNN major of a Windows cuDNN DLL that failed to load (cudnn64_7.dll -> 7); the sub-libraries of
    cuDNN 8/9 (cudnn_ops_infer64_8.dll) name other files, read by their own signatures."""
    if f.code != "dll-load-failed":
        return None
    m = _CUDNN_DLL.match(str(f.evidence.get("soname") or ""))
    return m.group(1) if m else None


def unnamed_missing_libraries(findings: List[Finding]) -> List[Finding]:
    """TensorFlow's 'Cannot dlopen some GPU libraries' with no line naming a library or another cause: the
    missing CUDA libraries are the cause itself (TensorFlow 2.16's pip wheels it could not find, a log cut
    above the dlopen lines), not a symptom of something else in the log."""
    if any(f.severity == Severity.ERROR and f.caused_by is None and f.evidence.get("signature") != UNNAMED_LIBRARIES
           for f in findings):
        return findings
    return [replace(f, code="cuda-library-missing", layer=CATALOG["cuda-library-missing"].layer)
            if f.evidence.get("signature") == UNNAMED_LIBRARIES and f.caused_by is None else f for f in findings]


def _framework(members: Sequence[Finding], facts: Dict[str, Any]) -> Tuple[str, str]:
    if any(m.evidence.get("signature") == "tf-dso-loader-missing" for m in members):
        version = facts.get("tf_version")
        return "tensorflow", f"TensorFlow{' ' + str(version) if version else ''}"
    return "", "The program"


def _merged(cuda: str, members: List[Finding], facts: Dict[str, Any]) -> Finding:
    sonames = [str(m.evidence.get("soname")) for m in members]
    libraries = [str(m.evidence.get("library")) for m in members]
    cudnn = next((m.evidence for m in members if m.evidence.get("library") == "cudnn"), None)
    framework, who = _framework(members, facts)
    found = [(v, where) for v, where in found_cuda(facts) if v != cuda]
    loaded = [s for s in as_list(facts.get("loaded")) if s.startswith(("libcudnn", "libcudart", "libcublas"))]
    needed = f"CUDA {cuda}" + (f" and cuDNN {cudnn.get('major')}" if cudnn else "")
    if len(sonames) == 1:
        detail = f"{who} was built for {needed}: it dlopens {sonames[0]}, which the loader did not find."
    else:
        detail = (f"{who} was built for {needed}: it dlopens {', '.join(sonames)}, and the loader found none of them "
                  f"({len(sonames)} libraries, one cause: the CUDA {cuda} libraries are not installed where it looks).")
    if loaded:
        detail += f" What did load: {', '.join(loaded)}."
    if found:
        detail += (" The log shows CUDA " + "; ".join(f"{v} ({where})" for v, where in found)
                   + f": another CUDA version does not serve it, because each soname carries its version.")
    fix = and_cuda_step(facts) if framework == "tensorflow" else []
    routed = [lib for lib in libraries if lib not in ("cudnn", *NO_INSTALL_ROUTE)] + (["cudnn"] if cudnn else [])
    if routed:
        fix += cuda_install_steps(cuda, routed, env_kind(facts), cudnn_major=str(cudnn.get("major")) if cudnn else None)
    else:  # CUPTI alone: where the toolkit keeps it
        fix += [step for m in members for step in m.fix if step not in fix]
    fix += driver_note(cuda, facts)
    if found and framework == "tensorflow":
        fix += _tensorflow_for(found[0][0])
    fix.append(f"If CUDA {cuda} is already on disk (`ls -d /usr/local/cuda-{cuda}*`), put its lib64 folder"
               + (" (CUPTI: extras/CUPTI/lib64)" if "cupti" in libraries else "") + " on LD_LIBRARY_PATH instead.")
    code = "cuda-version-mismatch" if found else ("cudnn-missing" if all(l == "cudnn" for l in libraries)
                                                   else "cuda-library-missing")
    evidence = dict(members[0].evidence, sonames=sonames, cuda_version=cuda, needs=needed,
                    found=[{"cuda": v, "where": w} for v, w in found], loaded=loaded,
                    lines=sorted({n for m in members for n in m.evidence.get("lines", [])})[:10],
                    count=sum(int(m.evidence.get("count", 1)) for m in members))
    title = (f"{who} needs the CUDA {cuda} libraries" + (f"; the log shows CUDA {found[0][0]}" if found else
                                                         ", and they are not on the loader path"))
    return make_finding(code, detail, evidence=evidence, fix=fix, title=title, severity=members[0].severity)


def and_cuda_step(facts: Dict[str, Any]) -> List[str]:
    """TensorFlow >= 2.14 installs its own CUDA and cuDNN wheels with the and-cuda extra."""
    version = str(facts.get("tf_version") or "")
    if not version or not compat.tensorflow_has_and_cuda(version):
        return []
    return [f'`pip install "tensorflow[and-cuda]=={version}"`: the CUDA and cuDNN wheels TensorFlow {version} pins.']


def and_cuda_hint(facts: Dict[str, Any]) -> str:
    """The and-cuda line a TensorFlow fix may add: pinned to the log's release, generic when the log
    does not name one, nothing for a release older than the extra (TensorFlow < 2.14)."""
    version = str(facts.get("tf_version") or "")
    if not version:
        return ("For TensorFlow >= 2.14 on Linux: `pip install 'tensorflow[and-cuda]'` installs matching CUDA and "
                "cuDNN wheels.")
    return and_cuda_step(facts)[0] if and_cuda_step(facts) else ""


def _tensorflow_for(cuda: str) -> List[str]:
    """The TensorFlow releases tested with the CUDA the machine has (compat/tensorflow.toml)."""
    rows = sorted((r for r in compat.tables().tf_tested if r.platform == "linux" and r.cuda == cuda),
                  key=lambda r: vkey(r.version))
    if not rows:
        return []
    span = rows[0].version if len(rows) == 1 else f"{rows[0].version}-{rows[-1].version}"
    newest = rows[-1]
    package = newest.package.replace("_", "-")
    return [f"Or use a TensorFlow built for the CUDA {cuda} you have ({span}, tested with cuDNN {newest.cudnn}): "
            f"`pip install \"{package}=={newest.version}\"` (Python {', '.join(newest.python)})."]

