"""Join what a log says with what `gpudoctor check --quick` sees on the same machine.

A pure function of the log's findings and the check's JSON (DESIGN.md contract), so it is
tested with hand-made dicts: the log says TensorFlow wants libcudnn.so.8, the check found
cuDNN 9 -> the finding becomes a cuDNN version mismatch that names both.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any, Dict, Iterable, List, Optional

from ..codes import make_finding
from ..model import Finding, Severity
from ..versions import cuda_version_text
from .engine import rank

_SONAME_LIB = re.compile(r"^lib(?P<name>[A-Za-z]+?)(?:_[a-z_]+)?\.so")


def _get(d: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def _library_entries(check_json: Dict[str, Any]) -> List[Dict[str, Any]]:
    libs = _get(check_json, "facts", "libraries")
    if isinstance(libs, dict):
        libs = libs.get("libraries", [])
    return [e for e in (libs or []) if isinstance(e, dict)]


def _library_name(soname: str) -> str:
    m = _SONAME_LIB.match(soname or "")
    return m.group("name") if m else ""


def _copies(entry: Dict[str, Any]) -> Iterable[Dict[str, Any]]:
    for key in ("copies", "loader_resolution"):
        for c in entry.get(key) or []:
            if isinstance(c, dict) and (c.get("path") or c.get("real_path")) and not c.get("error") \
                    and not c.get("load_error"):
                yield c


def _version_label(copy: Dict[str, Any]) -> str:
    v = copy.get("version") or copy.get("version_from_name")
    return f"{copy.get('soname', '?')}{f' (version {v})' if v else ''}"


def _major(soname: str) -> str:
    m = re.search(r"\.so\.(\d+)", soname or "")
    return m.group(1) if m else ""


def _join_library(f: Finding, check_json: Dict[str, Any]) -> Finding:
    soname = f.evidence.get("soname", "")
    name = _library_name(soname)
    if not name:
        return f
    entries = [e for e in _library_entries(check_json) if str(e.get("name", "")).lower() == name.lower()]
    copies = [c for e in entries for c in _copies(e)]
    same = [c for c in copies if c.get("soname") == soname]
    other = [c for c in copies if c.get("soname") != soname]
    evidence = dict(f.evidence, check_copies=[{k: c.get(k) for k in ("soname", "path", "real_path", "version",
                                                                        "found_via")} for c in copies])
    if same:
        c = same[0]
        folder = os.path.dirname(c.get("path") or c.get("real_path") or "")
        detail = (f"{f.detail} On this machine {soname} exists at {c.get('path') or c.get('real_path')}"
                  f"{' (found via ' + ', '.join(c.get('found_via') or []) + ')' if c.get('found_via') else ''},"
                  " but the program's loader did not look there.")
        fix = [f"export LD_LIBRARY_PATH={folder}:$LD_LIBRARY_PATH"] + list(f.fix)
        return replace(f, detail=detail, fix=fix, evidence=evidence)
    if other:
        have = ", ".join(sorted({_version_label(c) for c in other}))
        wants_major, has_majors = _major(soname), sorted({_major(c.get("soname", "")) for c in other})
        code = "cudnn-version-mismatch" if name.lower() == "cudnn" else "cuda-version-mismatch"
        detail = (f"The log shows the program wants {soname}"
                  f"{' (' + f.evidence['needs'] + ')' if f.evidence.get('needs') else ''}, but this machine has "
                  f"{have}: {'another major version' if wants_major not in has_majors else 'another version'}, "
                  "which does not satisfy it.")
        return make_finding(code, detail, evidence=evidence, fix=f.fix, caused_by=f.caused_by, severity=f.severity)
    return replace(f, detail=f"{f.detail} The check found no {name} library on this machine either.",
                   evidence=evidence)


def _join_libraries(f: Finding, check_json: Dict[str, Any]) -> Finding:
    """A finding for several missing libraries (one CUDA version): which of them this machine has, and where."""
    sonames = [str(s) for s in f.evidence.get("sonames") or []]
    entries = _library_entries(check_json)
    present: Dict[str, str] = {}
    for soname in sonames:
        name = _library_name(soname).lower()
        for entry in (e for e in entries if str(e.get("name", "")).lower() == name):
            for c in _copies(entry):
                if c.get("soname") == soname and soname not in present:
                    present[soname] = str(c.get("path") or c.get("real_path"))
    evidence = dict(f.evidence, check_present=present)
    if not present:
        return replace(f, detail=f"{f.detail} The check found none of them on this machine either.", evidence=evidence)
    folders = sorted({os.path.dirname(p) for p in present.values()})
    detail = (f"{f.detail} On this machine {', '.join(present)} exist in {', '.join(folders)}, but the program's "
              "loader did not look there" + ("." if len(present) == len(sonames) else
                                             f"; {', '.join(s for s in sonames if s not in present)} are missing here too."))
    fix = [f"export LD_LIBRARY_PATH={':'.join(folders)}:$LD_LIBRARY_PATH"] + list(f.fix)
    return replace(f, detail=detail, fix=fix, evidence=evidence)


def _driver_label(check_json: Dict[str, Any]) -> Optional[str]:
    nvml_version = _get(check_json, "facts", "driver", "nvml", "driver_version")
    cuda_int = _get(check_json, "facts", "driver", "libcuda", "driver_version") or \
        _get(check_json, "facts", "driver", "nvml", "cuda_driver_version")
    parts = []
    if nvml_version:
        parts.append(f"driver {nvml_version}")
    if cuda_version_text(cuda_int):
        parts.append(f"supports CUDA up to {cuda_version_text(cuda_int)}")
    return ", ".join(parts) or None


def _join_one(f: Finding, check_json: Dict[str, Any]) -> Finding:
    if len(f.evidence.get("sonames") or []) > 1:
        return _join_libraries(f, check_json)
    if f.code in ("cuda-library-missing", "cudnn-missing") and f.evidence.get("soname"):
        return _join_library(f, check_json)
    if f.code == "driver-too-old":
        label = _driver_label(check_json)
        if label:
            return replace(f, detail=f"{f.detail} This machine's driver: {label}.",
                           evidence=dict(f.evidence, check_driver=label))
    if f.code == "nvml-driver-mismatch":
        nvml = _get(check_json, "facts", "driver", "nvml") or {}
        if nvml.get("initialized") and not nvml.get("error"):
            return replace(f, severity=Severity.WARNING,
                           detail=f"{f.detail} NVML initialises on this machine now, so the mismatch is gone "
                                  "(the machine was probably rebooted since the log was written).")
    if f.code == "gpu-arch-unsupported":
        ccs = sorted({g.get("compute_capability") for g in (_get(check_json, "facts", "gpus") or [])
                      if isinstance(g, dict) and g.get("compute_capability")})
        if ccs:
            return replace(f, detail=f"{f.detail} GPUs on this machine: compute capability {', '.join(ccs)}.",
                           evidence=dict(f.evidence, check_compute_capabilities=ccs))
    return f


def join_with_check(log_findings: List[Finding], check_json: Dict[str, Any]) -> List[Finding]:
    """The log's findings refined by the machine's facts, plus the check's own findings."""
    joined = [_join_one(f, check_json) for f in log_findings]
    codes = {f.code for f in joined}
    for raw in check_json.get("findings") or []:
        try:
            cf = Finding.from_json(raw)
        except (KeyError, ValueError, TypeError):
            continue  # a finding this version cannot read is skipped, never fatal
        if cf.code in codes:
            joined = [replace(f, evidence=dict(f.evidence, confirmed_by_check=True)) if f.code == cf.code else f
                      for f in joined]
            continue
        codes.add(cf.code)
        joined.append(replace(cf, evidence=dict(cf.evidence, source="check")))
    return rank(joined)
