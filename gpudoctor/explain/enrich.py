"""Turn raw extracted strings into the versions and names a fix can use.

`libcudart.so.11.0` -> CUDA 11.0; `12010` (as JAX and cuDriverGetVersion print it) -> 12.1;
`7201` (cudnnGetVersion of cuDNN 7) -> 7.2.1; `sm_86` -> compute capability 8.6.
Each enricher takes the values extracted so far and returns new ones (or None to reject
the match, e.g. a library gpudoctor knows nothing about).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Optional

from ..units import in_mib
from .catalogue import Catalogue, CudaError
from ..versions import cuda_version_parts

Values = Dict[str, Any]


def cuda_version_from_int(n: int) -> str:
    """cuDriverGetVersion / cudaRuntimeGetVersion encoding: 1000*major + 10*minor."""
    return "%d.%d" % cuda_version_parts(n)


def library_version_from_int(n: int) -> str:
    """cudnnGetVersion and friends: 1000*major + 100*minor + patch (cuDNN >= 9: 10000*major)."""
    if n >= 10000:
        return f"{n // 10000}.{(n % 10000) // 100}.{n % 100}"
    return f"{n // 1000}.{(n % 1000) // 100}.{n % 100}"


def _dotted(raw: str, as_cuda: bool) -> str:
    if raw.isdigit() and len(raw) >= 4:
        n = int(raw)
        return cuda_version_from_int(n) if as_cuda else library_version_from_int(n)
    return raw


# an import that failed, or a program the loader could not start: an optional library was needed there
_IMPORT_FAILED = re.compile(r"\b(?:ImportError|ModuleNotFoundError|OSError):\s*\S*lib|error while loading shared libraries")


def soname(cat: Catalogue, values: Values, line: str, arg: str) -> Optional[Values]:
    name = values.get(arg or "soname") or ""
    fam = cat.soname_family(name)
    if fam is None:
        return None  # not a GPU library: not ours to diagnose
    m = fam.pattern.search(name)
    groups = {k: v for k, v in m.groupdict().items() if v}
    version = groups.get("version", "")
    major = version.split(".")[0] if version else ""
    # a dependency of an optional library ("Could not load 'libnvinfer_plugin.so.6'; dlerror:
    # libnvrtc.so.10.1: ...") is as optional as the library that was asked for
    wanted = cat.soname_family(str(values.get("wanted") or ""))
    # ... unless the program itself failed to import it: `import tensorrt` raising ImportError for
    # libnvinfer is a failure, where TensorFlow's "Could not load dynamic library" is only a note
    optional = (fam.optional or bool(wanted and wanted.optional)) and not _IMPORT_FAILED.search(line)
    out: Values = dict(groups, version=version, major=major, component=fam.component.format(**groups)
                       if "{" in fam.component else fam.component, _optional=optional,
                       _code=fam.code, _fix=fam.fix)
    out["what"] = out["component"]
    if fam.library:
        out["library"] = fam.library.format(**groups) if "{" in fam.library else fam.library
    if version and fam.version_is == "library" and _toolkit_numbered(fam, version):
        # libcufft.so.10.0: until CUDA 10.0 the math libraries carried the toolkit's major.minor
        out["needs"] = out["cuda_version"] = version
        out["what"] = f"{out['component']} for CUDA {version}"
    elif version and fam.version_is == "cuda":
        out["needs"] = f"CUDA {version}"
        out["cuda_version"] = version
        out["what"] = f"{out['component']} for CUDA {version}"
    elif version and fam.version_is == "library":
        short = groups.get("lib") or fam.component.split(" (")[0]
        out["needs"] = f"{short} {version}"
        out["what"] = out["needs"]
    return out


def _toolkit_numbered(fam, version: str) -> bool:
    parts = version.split(".")
    return fam.library not in ("cudnn", "nccl") and len(parts) == 2 and parts[0].isdigit() and int(parts[0]) <= 10


def cuda_error(cat: Catalogue, values: Values, line: str, arg: str) -> Optional[Values]:
    err = cat.cuda_error(values.get(arg or "err") or "")
    if err is None:
        return None
    if err.requires and err.requires not in line.lower() and values.get("err", "").lower() == err.message.lower():
        return None  # a generic message ("unknown error") outside any CUDA context
    return _error_values(err)


def _error_values(err: CudaError) -> Values:
    """What a CUDA error table entry gives a finding: its names, message, meaning, code and fix."""
    return {"err_number": err.number, "err_name": err.names, "err_message": err.message,
            "err_meaning": err.meaning, "_code": err.code, "_fix": err.fix}


def cuda_number(cat: Catalogue, values: Values, line: str, arg: str) -> Optional[Values]:
    """An error given only by its number ("init failure: 999"): the table's reading when it has the number,
    else the signature's own code stands."""
    raw = str(values.get(arg) or "")
    err = next((e for e in cat.cuda_errors if str(e.number) == raw), None)
    return {} if err is None else _error_values(err)


def cuda_int(cat: Catalogue, values: Values, line: str, arg: str) -> Optional[Values]:
    raw = str(values.get(arg) or "")
    return {f"{arg}_cuda": _dotted(raw, True)} if raw else {}


def cudnn_int(cat: Catalogue, values: Values, line: str, arg: str) -> Optional[Values]:
    raw = str(values.get(arg) or "").rstrip(".")
    if not raw:
        return {}
    dotted = _dotted(raw, False)
    major = dotted.split(".")[0]
    out = {f"{arg}_v": dotted, f"{arg}_major": major}
    if major.isdigit():
        out[f"{arg}_next"] = str(int(major) + 1)
    return out


def cudnn_wheel(cat: Catalogue, values: Values, line: str, arg: str) -> Optional[Values]:
    """`pip install "nvidia-cudnn-cuXX==M.*"` for the cuDNN major in `{arg}_major`, only where such a
    wheel was published (cuDNN wheels start with 8.x for CUDA 11/12; none for cuDNN 7)."""
    from ..fixes import known_pip

    major = str(values.get(f"{arg}_major") or "")
    for cu in (12, 11, 13):
        versions = known_pip().get(f"nvidia-cudnn-cu{cu}", {}).get("versions") or []
        if major and any(v.split(".")[0] == major for v in versions):
            return {f"{arg}_pip": f'pip install "nvidia-cudnn-cu{cu}=={major}.*"'}
    return {}


def jax_version(cat: Catalogue, values: Values, line: str, arg: str) -> Optional[Values]:
    raw = str(values.get(arg) or "")
    return {f"{arg}_v": _dotted(raw, values.get("lib", "").upper() == "CUDA")} if raw else {}


def sm(cat: Catalogue, values: Values, line: str, arg: str) -> Optional[Values]:
    raw = str(values.get(arg) or "")
    if not raw.isdigit():
        return {}
    return {"cc": f"{raw[:-1]}.{raw[-1]}"}


_SIZE = r"([\d.]+) ([KMGT]i?B|bytes)\b"
# The numbers of PyTorch's caching-allocator OOM message, in its old and its new (>= 2.1) wording
# (which first printed "total capacty").
_OOM_TOTAL = (re.compile(_SIZE + r" total capacity"), re.compile(r"total capac\w*ty of " + _SIZE))
_OOM_FREE = (re.compile(_SIZE + r" free"), re.compile(r"of which " + _SIZE + r" is free"))
_OOM_OWN = (re.compile(_SIZE + r" reserved in total by PyTorch"), re.compile(r"this process has " + _SIZE + r" memory in use"))
# Without "this process has" (NVML lists the process under another PID, as in a container), what
# PyTorch itself holds is still printed: "Of the allocated memory A is allocated by PyTorch, and B is
# reserved by PyTorch but unallocated" (A + B, the CUDA context's few hundred MiB left out).
_OOM_PYTORCH = re.compile(r"Of the allocated memory " + _SIZE + r" is allocated by PyTorch, and " + _SIZE + r" is reserved by PyTorch")
# PyTorch before 1.4 printed "X already allocated; Y free; Z cached)", Z the cache on top of X: what the
# process holds is at least X + Z (read as exactly that, so memory held elsewhere is never overstated).
_OOM_ALLOCATED = (re.compile(_SIZE + r" already allocated"),)
_OOM_CACHED = (re.compile(_SIZE + r" cached\)"),)


def _mib(patterns, line: str) -> Optional[float]:
    for pattern in patterns:
        m = pattern.search(line)
        if m:
            return _size_mib(m.group(1), m.group(2))
    return None


def _size_mib(number: str, unit: str) -> float:
    return float(number) / (1024 * 1024) if unit == "bytes" else in_mib(number, unit[0])


def torch_oom(cat: Catalogue, values: Values, line: str, arg: str) -> Optional[Values]:
    """PyTorch's OOM message says how much the GPU has, how much is free and how much this process
    holds. When most of the GPU is neither free nor this process's, another process holds it: the
    program did not outgrow the GPU. `arg` is "elsewhere" (keep the match only then) or "own"."""
    total, free, own = _mib(_OOM_TOTAL, line), _mib(_OOM_FREE, line), _mib(_OOM_OWN, line)
    pytorch = _OOM_PYTORCH.search(line)
    if own is None and pytorch:
        own = _size_mib(pytorch.group(1), pytorch.group(2)) + _size_mib(pytorch.group(3), pytorch.group(4))
    if own is None and _mib(_OOM_CACHED, line) is not None:
        allocated = _mib(_OOM_ALLOCATED, line)
        own = None if allocated is None else allocated + (_mib(_OOM_CACHED, line) or 0.0)
    elsewhere = total - free - own if None not in (total, free, own) else None
    held_elsewhere = elsewhere is not None and elsewhere >= max(1024.0, 0.5 * total)
    if arg == "elsewhere":
        if not held_elsewhere:
            return None
        return {"total_mib": f"{total:.0f}", "elsewhere_mib": f"{elsewhere:.0f}", "own_mib": f"{own:.0f}"}
    return None if held_elsewhere else {}


ENRICHERS: Dict[str, Callable[[Catalogue, Values, str, str], Optional[Values]]] = {
    "soname": soname,
    "cuda_error": cuda_error,
    "cuda_number": cuda_number,
    "cuda_int": cuda_int,
    "cudnn_int": cudnn_int,
    "cudnn_wheel": cudnn_wheel,
    "jax_version": jax_version,
    "sm": sm,
    "torch_oom": torch_oom,
}
