"""Compare two reports: which facts differ, ranked by how likely each is to explain a failure.

A report is flattened into *aspects*: one comparable value per fact that matters (driver
version, libcudart's real path, torch's CUDA build, CUDA_VISIBLE_DEVICES, ...), each with a
weight. The weights follow the layer model (DESIGN.md): a GPU stack fails from the bottom up, so
a different driver explains more than a different cuDNN, which explains more than a different
numpy. A category that a one-sided error finding points at (driver-too-old -> driver) is raised
above the rest, because that is where the failing side says the problem is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from ..gpu_packages import is_gpu_package
from ..versions import cuda_version_text

# category -> base weight (higher: more likely to explain a failure)
WEIGHTS: Dict[str, int] = {
    "driver": 100,
    "gpus": 85,
    "visibility": 80,
    "cuda-libraries": 70,
    "frameworks": 65,
    "runtime-test": 60,
    "environment": 50,
    "packages": 40,
    "system": 30,
}
IMPLICATED_BONUS = 50
# Finding layer -> the fact category it rests on. Compatibility findings are named one by one.
_LAYER_CATEGORY = {
    "hardware": "gpus", "kernel-driver": "driver", "userspace-driver": "driver", "visibility": "visibility",
    "cuda-libraries": "cuda-libraries", "framework": "frameworks", "runtime-test": "runtime-test",
}
_CODE_CATEGORY = {
    "driver-too-old": "driver", "gpu-arch-unsupported": "gpus", "python-unsupported": "system",
    "platform-unsupported": "system", "misspelled-env-var": "environment", "conflicting-packages": "packages",
    "cudnn-version-mismatch": "cuda-libraries", "cuda-version-mismatch": "cuda-libraries",
}


@dataclass(frozen=True)
class Aspect:
    key: str  # stable id, e.g. "driver.version"
    label: str  # for people: "NVIDIA driver version"
    category: str
    value: Optional[str]
    weight: int  # adjustment within the category (+ is more telling)


@dataclass
class FactDifference:
    key: str
    label: str
    category: str
    a: Optional[str]
    b: Optional[str]
    score: int
    why: str = ""  # why it ranks where it does, when a finding points at it

    def to_json(self) -> Dict[str, Any]:
        return {"key": self.key, "label": self.label, "category": self.category, "a": self.a, "b": self.b,
                "score": self.score, "why": self.why}


@dataclass
class FindingSide:
    code: str
    severity: str
    title: str
    caused_by: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "title": self.title, "caused_by": self.caused_by}


@dataclass
class ReportDiff:
    a_name: str
    b_name: str
    a_verdict: str
    b_verdict: str
    facts: List[FactDifference] = field(default_factory=list)  # most likely explanation first
    only_in_a: List[FindingSide] = field(default_factory=list)
    only_in_b: List[FindingSide] = field(default_factory=list)
    severity_changed: List[Tuple[FindingSide, FindingSide]] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {
            "a": {"name": self.a_name, "verdict": self.a_verdict},
            "b": {"name": self.b_name, "verdict": self.b_verdict},
            "facts": [d.to_json() for d in self.facts],
            "findings": {
                "only_in_a": [f.to_json() for f in self.only_in_a],
                "only_in_b": [f.to_json() for f in self.only_in_b],
                "severity_changed": [{"code": a.code, "a": a.severity, "b": b.severity}
                                     for a, b in self.severity_changed],
            },
        }


# -- flattening a report into aspects -----------------------------------------------------------

def _get(obj: Any, *path: Any) -> Any:
    for key in path:
        if isinstance(obj, Mapping):
            obj = obj.get(key)
        else:
            return None
    return obj


def _text(v: Any) -> Optional[str]:
    if v is None or v == "" or v == [] or v == {}:
        return None
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return str(v)


def _cuda(v: Any) -> Optional[str]:
    return cuda_version_text(v) or _text(v)


def _driver(facts: Mapping[str, Any]) -> Iterator[Aspect]:
    d = facts.get("driver") or {}
    kernel, libcuda, nvml = d.get("kernel") or {}, d.get("libcuda") or {}, d.get("nvml") or {}
    yield Aspect("driver.version", "NVIDIA driver version (kernel module)", "driver", _text(kernel.get("version")), 10)
    yield Aspect("driver.nvml_version", "NVIDIA driver version (NVML)", "driver", _text(nvml.get("driver_version")), 9)
    yield Aspect("driver.cuda_version", "CUDA version the driver supports", "driver",
                 _cuda(libcuda.get("driver_version") or nvml.get("cuda_driver_version")), 10)
    init = libcuda.get("init_result")
    yield Aspect("driver.cuinit", "cuInit result", "driver",
                 None if init is None else ("0 (success)" if init == 0 else
                                           f"{init} {libcuda.get('init_error_name') or ''}".strip()), 8)
    yield Aspect("driver.libcuda", "libcuda.so.1 loaded from", "driver",
                 _text(libcuda.get("path") or libcuda.get("load_error")), 5)
    yield Aspect("driver.nvml_error", "NVML error", "driver", _text(nvml.get("error")), 8)
    for module, loaded in sorted((kernel.get("modules") or {}).items()):
        yield Aspect(f"driver.module.{module}", f"kernel module {module} loaded", "driver", _text(loaded), 6)
    missing = [n.get("path") for n in kernel.get("device_nodes") or [] if not (n.get("exists") and n.get("accessible"))]
    yield Aspect("driver.device_nodes_unusable", "device nodes missing or not accessible", "driver", _text(missing), 7)


def _gpus(facts: Mapping[str, Any]) -> Iterator[Aspect]:
    gpus = facts.get("gpus") or []
    yield Aspect("gpus.count", "number of GPUs (NVML)", "gpus", str(len(gpus)), 5)
    for g in gpus:
        i = g.get("index")
        yield Aspect(f"gpus.{i}.name", f"GPU {i} model", "gpus", _text(g.get("name")), 3)
        yield Aspect(f"gpus.{i}.cc", f"GPU {i} compute capability", "gpus", _text(g.get("compute_capability")), 4)
        yield Aspect(f"gpus.{i}.mig", f"GPU {i} MIG mode", "gpus", _text(g.get("mig_mode")), 2)


def _visibility(facts: Mapping[str, Any]) -> Iterator[Aspect]:
    v = facts.get("visible_devices") or {}
    yield Aspect("visibility.cuda_visible_devices", "CUDA_VISIBLE_DEVICES", "visibility",
                 "(not set)" if v.get("cuda_visible_devices") is None else str(v["cuda_visible_devices"]), 10)
    yield Aspect("visibility.order", "CUDA_DEVICE_ORDER", "visibility", _text(v.get("cuda_device_order")), 2)
    mapping = ", ".join(f"{m.get('logical')}→{m.get('physical_index')}" for m in v.get("mapping") or [])
    yield Aspect("visibility.mapping", "logical → physical GPUs", "visibility", mapping or "(none)", 6)
    yield Aspect("visibility.hides_all", "CUDA_VISIBLE_DEVICES hides every GPU", "visibility",
                 _text(v.get("hides_all")), 8)


def _libraries(facts: Mapping[str, Any]) -> Iterator[Aspect]:
    for lib in _get(facts, "libraries", "libraries") or []:
        name = lib.get("name")
        for r in lib.get("loader_resolution") or []:
            soname = r.get("soname")
            yield Aspect(f"lib.{soname}.version", f"{soname} version (what dlopen loads)", "cuda-libraries",
                         _text(r.get("version")) or (None if r.get("real_path") else _text(r.get("error"))), 8)
            yield Aspect(f"lib.{soname}.path", f"{soname} real path (what dlopen loads)", "cuda-libraries",
                         _text(r.get("real_path")), 4)
        copies = lib.get("copies") or []
        yield Aspect(f"lib.{name}.copies", f"copies of {name} found", "cuda-libraries",
                     str(len(copies)) if copies else None, 2)
    for tool in _get(facts, "libraries", "tools") or []:
        yield Aspect(f"tool.{tool.get('name')}", f"{tool.get('name')} version", "cuda-libraries",
                     _text(tool.get("version")), -20)


_FRAMEWORK_KEYS = [  # (key, label, weight): the build a framework is, then what it says live
    ("version", "version", 6), ("build", "build", 9), ("cuda_version", "CUDA build", 10),
    ("cudnn_version", "cuDNN", 8), ("status", "probe status", 7), ("import_error", "import error", 9),
    ("gpu_available", "GPU available", 7), ("device_count", "device count", 5),
    ("cuda_init_error", "CUDA init error", 9), ("arch_list", "arch list", 4), ("nccl_version", "NCCL", 2),
    ("built_with_cuda", "built with CUDA", 9),
]


def _frameworks(facts: Mapping[str, Any]) -> Iterator[Aspect]:
    for name, fw in sorted((_get(facts, "frameworks", "frameworks") or {}).items()):
        if not isinstance(fw, Mapping):
            yield Aspect(f"fw.{name}", name, "frameworks", _text(fw), 5)
            continue
        layers = [("static", fw.get("static")), ("live", fw.get("live")), ("", fw)]
        for key, label, weight in _FRAMEWORK_KEYS:
            value = next((src[key] for _, src in layers if isinstance(src, Mapping) and src.get(key) not in
                          (None, "", [])), None)
            yield Aspect(f"fw.{name}.{key}", f"{name} {label}", "frameworks", _text(value), weight)


def _environment(facts: Mapping[str, Any]) -> Iterator[Aspect]:
    variables = _get(facts, "environment", "variables") or {}
    loader_vars = {"LD_LIBRARY_PATH": 8, "LD_PRELOAD": 8, "CUDA_HOME": 6, "CUDA_PATH": 6, "PATH": 2}
    for name, value in variables.items():
        yield Aspect(f"env.{name}", f"${name}", "environment", _text(value), loader_vars.get(name, 0))
    for m in _get(facts, "environment", "misspelled") or []:
        yield Aspect(f"env.misspelled.{m.get('name')}", f"${m.get('name')} (misspelled {m.get('meant')})",
                     "environment", _text(m.get("value")), 9)


def _packages(facts: Mapping[str, Any]) -> Iterator[Aspect]:
    for name, version in (_get(facts, "frameworks", "packages") or {}).items():
        gpu = is_gpu_package(name)
        yield Aspect(f"pkg.{name}", f"package {name}", "packages", _text(version), 10 if gpu else -30)
    for p in _get(facts, "frameworks", "conda_packages") or []:
        if isinstance(p, Mapping):
            value = f"{p.get('version')} ({p.get('build')})" if p.get("build") else _text(p.get("version"))
            yield Aspect(f"conda.{p.get('name')}", f"conda package {p.get('name')}", "packages", value, 10)


def _runtime(facts: Mapping[str, Any]) -> Iterator[Aspect]:
    rt = facts.get("runtime_test") or {}
    yield Aspect("runtime.ran", "driver-API test ran", "runtime-test", _text(rt.get("ran")), 0)
    for d in rt.get("devices") or []:
        result = "ok" if d.get("ok") else f"failed at {d.get('step')} {d.get('error_name') or ''}".strip()
        yield Aspect(f"runtime.{d.get('ordinal')}", f"driver-API test on cuda:{d.get('ordinal')}", "runtime-test",
                     result, 5)


def _system(facts: Mapping[str, Any]) -> Iterator[Aspect]:
    s = facts.get("system") or {}
    for key, label, weight in [("python_version", "Python version", 10), ("env_kind", "environment kind", 6),
                               ("in_container", "in a container", 8), ("wsl", "WSL", 8), ("os", "OS", 9),
                               ("machine", "CPU architecture", 9), ("kernel_release", "Linux kernel", 4),
                               ("distro", "distribution", 2)]:
        yield Aspect(f"system.{key}", label, "system", _text(s.get(key)), weight)


EXTRACTORS: List[Callable[[Mapping[str, Any]], Iterator[Aspect]]] = [
    _driver, _gpus, _visibility, _libraries, _frameworks, _environment, _packages, _runtime, _system]


def aspects_of(report: Mapping[str, Any]) -> Dict[str, Aspect]:
    facts = report.get("facts") or {}
    out: Dict[str, Aspect] = {}
    for extract in EXTRACTORS:
        for aspect in extract(facts):
            out.setdefault(aspect.key, aspect)
    return out


# -- comparing ----------------------------------------------------------------------------------

def _sides(findings: List[Mapping[str, Any]]) -> Dict[str, FindingSide]:
    return {f["code"]: FindingSide(f["code"], f.get("severity", ""), f.get("title", ""), f.get("caused_by"))
            for f in findings if isinstance(f, Mapping) and f.get("code")}


def _implicated(findings: List[Mapping[str, Any]], codes: List[str]) -> Dict[str, str]:
    """category -> the code of a one-sided error/warning finding that points at it."""
    out: Dict[str, str] = {}
    for f in findings:
        if f.get("code") in codes and f.get("severity") in ("error", "warning") and not f.get("caused_by"):
            category = _CODE_CATEGORY.get(f["code"]) or _LAYER_CATEGORY.get(f.get("layer", ""))
            if category:
                out.setdefault(category, f["code"])
    return out


def diff_reports(a: Mapping[str, Any], b: Mapping[str, Any], a_name: str = "A", b_name: str = "B") -> ReportDiff:
    """What differs between two check reports (the JSON contract), most telling first."""
    a_find, b_find = list(a.get("findings") or []), list(b.get("findings") or [])
    sa, sb = _sides(a_find), _sides(b_find)
    only_a = [sa[c] for c in sa if c not in sb]
    only_b = [sb[c] for c in sb if c not in sa]
    changed = [(sa[c], sb[c]) for c in sa if c in sb and sa[c].severity != sb[c].severity]
    implicated = _implicated(a_find, [f.code for f in only_a])
    for category, code in _implicated(b_find, [f.code for f in only_b]).items():
        implicated.setdefault(category, code)

    aa, ab = aspects_of(a), aspects_of(b)
    diffs: List[FactDifference] = []
    for key in list(aa) + [k for k in ab if k not in aa]:
        x, y = aa.get(key), ab.get(key)
        va, vb = (x.value if x else None), (y.value if y else None)
        if va == vb:
            continue
        aspect = x or y
        assert aspect is not None
        score = WEIGHTS.get(aspect.category, 0) + aspect.weight
        why = ""
        if aspect.category in implicated:
            score += IMPLICATED_BONUS
            why = f"{aspect.category}, as {implicated[aspect.category]} says"
        diffs.append(FactDifference(key, aspect.label, aspect.category, va, vb, score, why))
    diffs.sort(key=lambda d: -d.score)  # stable: equal scores keep report order
    return ReportDiff(a_name, b_name, str(a.get("verdict", "?")), str(b.get("verdict", "?")), diffs,
                      only_a, only_b, changed)
