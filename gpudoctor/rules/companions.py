"""Companion packages built for another framework release: torchvision for another torch, keras for
another TensorFlow, jaxlib or the CUDA plugin for another jax.

The evidence is what the installed packages say about each other: their `Requires-Dist` pins
(torchvision 0.20.1 requires torch==2.5.1; TensorFlow 2.15 requires keras<2.16,>=2.15.0), the CUDA
variant in their local versions (torchvision 0.19.1+cu118 next to torch 2.4.1+cu121), and PyG's
`+pt24cu121` tags. One finding per framework, with the one install command that aligns them: pip picks
the companion versions whose pins match the installed framework, so no version is invented here.
Compiled extensions are read too: the CUDA runtime they link and the symbols of torch they need
(probes/frameworks/extensions.py). Users meet these as "operator torchvision::nms does not exist",
undefined symbols at import, or torchvision's "PyTorch and torchvision were compiled with different
CUDA versions".
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion

from .. import compat
from ..codes import make_finding
from ..facts import Facts
from ..facts.frameworks import Distribution, ExtensionLink, normalize_name
from ..model import Finding
from .base import Prior
from .situation import pip

# companion distribution -> the framework release it is built for
FRAMEWORK_OF = {
    "torchvision": "torch", "torchaudio": "torch", "torchtext": "torch", "torchdata": "torch", "xformers": "torch",
    "keras": "tensorflow", "tf-keras": "tensorflow",
    "jaxlib": "jax", "jax-cuda11-plugin": "jax", "jax-cuda12-plugin": "jax", "jax-cuda13-plugin": "jax",
    "jax-cuda12-pjrt": "jax", "jax-cuda13-pjrt": "jax",
}
TF_DISTRIBUTIONS = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel", "tf-nightly")
# PyG's extension wheels carry the torch release and CUDA variant they were built for: 2.1.2+pt24cu121.
PYG_PACKAGES = ("torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib")
_PYG_TAG = re.compile(r"\+pt(\d)(\d+)(cu\d+|cpu)$")
# Extensions installed from their repositories only (the index's "apex" is an unrelated web toolkit): the
# rebuild their own install guides give, against the torch installed (no build isolation).
SOURCE_ONLY = {
    "apex": "follow NVIDIA apex's README from a clone (`pip install -v --no-build-isolation --no-cache-dir .` with "
            "the CUDA extension options it lists)",
    "detectron2": "`python -m pip install --no-build-isolation 'git+https://github.com/facebookresearch/detectron2.git'`"
                  " (detectron2's INSTALL.md: rebuild it after every torch reinstall)",
}
_CUDA_TAG = re.compile(r"\+(cu\d+|cpu|rocm[\d.]+)$")
_JAX_PLUGIN = re.compile(r"^jax-cuda(\d+)-plugin$")
_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


@dataclass
class Mismatch:
    companion: Distribution
    framework: str  # torch | tensorflow | jax
    reason: str  # for the detail: "requires torch==2.5.1", "is built for cu118"
    # pin (the companion pins the framework) | framework-pin (the framework pins it) | variant | pyg
    # | runtime (an extension linked against another CUDA) | abi (an extension built against another torch)
    kind: str
    specifier: str = ""  # for framework-pin: the framework's own specifier of the companion
    cuda_runtime: str = ""  # for runtime: the libcudart soname the extension needs
    symbol: str = ""  # for abi: the first symbol of torch's that the extension needs and torch lacks


def _group(name: str) -> Optional[str]:
    key = normalize_name(name)
    if key in TF_DISTRIBUTIONS:
        return "tensorflow"
    if key in ("torch", "jax"):
        return key
    return FRAMEWORK_OF.get(key)


def _installed(facts: Facts) -> Dict[str, Distribution]:
    out: Dict[str, Distribution] = {}
    for dist in facts.frameworks.distributions:
        out.setdefault(dist.key, dist)  # the first on sys.path is the one Python imports
    return out


def _applies(req: Requirement, marker_env: Dict[str, str]) -> bool:
    """Does a requirement apply here? One under an extra applies because its target is installed
    (jax[cuda12] pins jax-cuda12-plugin; the plugin being there means that extra was chosen)."""
    if req.marker is None:
        return True
    found = _EXTRA.search(str(req.marker))
    env = dict(marker_env)
    env["extra"] = found.group(1) if found else ""
    try:
        return not marker_env or bool(req.marker.evaluate(env))
    except Exception:  # an unknown marker variable: keep the requirement
        return True


def _pin_mismatches(facts: Facts, installed: Dict[str, Distribution]) -> List[Mismatch]:
    out: List[Mismatch] = []
    for dist in installed.values():
        for line in dist.requires:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            target = installed.get(normalize_name(req.name))
            group = _group(req.name)
            if target is None or target.key == dist.key or group is None or group != _group(dist.name):
                continue
            if not str(req.specifier) or not _applies(req, facts.frameworks.marker_environment):
                continue
            try:
                ok = req.specifier.contains(target.version, prereleases=True)
            except InvalidVersion:
                continue
            if ok:
                continue
            if dist.key in FRAMEWORK_OF:  # the companion pins the framework (or a sibling)
                out.append(Mismatch(dist, group, f"requires {req.name}{req.specifier}", "pin"))
            else:  # the framework pins the companion
                out.append(Mismatch(target, group, f"is not what {dist.name} {dist.version} requires "
                                                   f"({req.name}{req.specifier})", "framework-pin", str(req.specifier)))
    return out


def _variant_mismatches(installed: Dict[str, Distribution]) -> List[Mismatch]:
    torch = installed.get("torch")
    if torch is None:
        return []
    torch_tag = _CUDA_TAG.search(torch.version)
    torch_variant = torch_tag.group(1) if torch_tag else None
    out: List[Mismatch] = []
    for key, dist in installed.items():
        if FRAMEWORK_OF.get(key) == "torch" and torch_variant:
            tag = _CUDA_TAG.search(dist.version)
            if tag and tag.group(1) != torch_variant:
                out.append(Mismatch(dist, "torch", f"is built for {tag.group(1)}, torch for {torch_variant}", "variant"))
        elif key in PYG_PACKAGES:
            tag = _PYG_TAG.search(dist.version)
            release = ".".join(torch.version.split("+")[0].split(".")[:2])
            if tag and (f"{tag.group(1)}.{tag.group(2)}" != release or (torch_variant and tag.group(3) != torch_variant)):
                out.append(Mismatch(dist, "torch", f"is built for torch {tag.group(1)}.{tag.group(2)} and {tag.group(3)}",
                                    "pyg"))
    return out


def _runtime_mismatches(facts: Facts, installed: Dict[str, Distribution]) -> List[Mismatch]:
    """Companion extension modules linked against a libcudart of another CUDA major than torch's build."""
    torch = facts.frameworks.framework("torch")
    cuda = torch.static.cuda_version if torch is not None else None
    if not cuda or not re.match(r"\d+\.\d+", cuda):
        return []
    by_dist: Dict[str, List[ExtensionLink]] = {}
    for link in facts.frameworks.extension_links:
        if link.cuda_runtime:
            by_dist.setdefault(normalize_name(link.distribution), []).append(link)
    out: List[Mismatch] = []
    for key, links in by_dist.items():
        majors = [link.cuda_runtime.split(".so.", 1)[1].split(".")[0] for link in links]
        dist = installed.get(key)
        # bitsandbytes ships one library per CUDA version and loads the one for torch's: one match is enough
        if dist is None or cuda.split(".")[0] in majors:
            continue
        link, wanted = links[0], majors[0]
        out.append(Mismatch(dist, "torch", f"has {os.path.basename(link.path)}, linked against {link.cuda_runtime} "
                                           f"(CUDA {wanted}), while torch is built for CUDA {cuda}", "runtime",
                            cuda_runtime=link.cuda_runtime))
    return out


def _abi_mismatches(facts: Facts, installed: Dict[str, Distribution]) -> List[Mismatch]:
    """Companion extension modules that need symbols of torch the installed torch does not define."""
    torch = installed.get("torch")
    if torch is None:
        return []
    out: List[Mismatch] = []
    for link in facts.frameworks.extension_links:
        dist = installed.get(normalize_name(link.distribution))
        if dist is None or not link.missing_torch_symbols:
            continue
        out.append(Mismatch(dist, "torch", f"has {os.path.basename(link.path)}, which needs "
                                           f"{link.missing_torch_symbol_count} symbol(s) of torch that torch "
                                           f"{torch.version} does not define ({link.missing_torch_symbols[0]}): "
                                           "it was built against another torch", "abi",
                            symbol=link.missing_torch_symbols[0]))
    return out


def companion_conflicts(facts: Facts, prior: Prior) -> Iterable[Finding]:
    installed = _installed(facts)
    mismatches = (_pin_mismatches(facts, installed) + _variant_mismatches(installed)
                  + _runtime_mismatches(facts, installed) + _abi_mismatches(facts, installed))
    by_framework: Dict[str, List[Mismatch]] = {}
    seen = set()
    for m in mismatches:
        if (m.companion.key, m.kind) not in seen:
            seen.add((m.companion.key, m.kind))
            by_framework.setdefault(m.framework, []).append(m)
    for framework, group in sorted(by_framework.items()):
        yield _finding(facts, installed, framework, group)


def _framework_dist(installed: Dict[str, Distribution], framework: str) -> Optional[Distribution]:
    keys = TF_DISTRIBUTIONS if framework == "tensorflow" else (framework,)
    return next((installed[k] for k in keys if k in installed), None)


def _finding(facts: Facts, installed: Dict[str, Distribution], framework: str, group: List[Mismatch]) -> Finding:
    fw = _framework_dist(installed, framework)
    fw_text = f"{fw.name} {fw.version}" if fw else framework
    listing = "; ".join(f"{m.companion.name} {m.companion.version} {m.reason}" for m in group)
    runtimes = sorted({m.cuda_runtime for m in group if m.kind == "runtime"})
    symptom = (f" An extension linked against another CUDA runtime fails at import with \"{runtimes[0]}: cannot "
               "open shared object file\" (torch brings only its own CUDA's)." if runtimes else "")
    symbols = [m.symbol for m in group if m.kind == "abi"]
    if symbols:
        symptom += (f" An extension built against another torch fails at import with \"undefined symbol: "
                    f"{symbols[0]}\".")
    detail = (f"Installed next to {fw_text}: {listing}. A companion built for another release fails at import "
              "(undefined symbols, \"operator torchvision::nms does not exist\") or refuses to run "
              f"(\"compiled with different CUDA versions\").{symptom}")
    return make_finding("conflicting-packages", detail, title=f"Packages built for another {framework} release",
                        fix=_fix(facts, installed, framework, fw, group),
                        evidence={"frameworks": [framework], "framework": fw_text,
                                  "companions": [{"name": m.companion.name, "version": m.companion.version,
                                                  "reason": m.reason} for m in group]})


def _jax_extra(jax: Distribution, installed: Dict[str, Distribution]) -> str:
    """"[cuda12]": the extra of jax's own metadata that requires the CUDA plugin installed here."""
    plugins = {k for k in installed if _JAX_PLUGIN.match(k)}
    for line in jax.requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        found = _EXTRA.search(str(req.marker)) if req.marker is not None else None
        if found and normalize_name(req.name) in plugins:
            return f"[{found.group(1)}]"
    return ""


def _torch_index(torch: Distribution) -> str:
    """` --index-url ...` of the installed torch's CUDA variant, when the tables know it."""
    tag = _CUDA_TAG.search(torch.version)
    if not tag:
        return ""
    release = compat.torch_release(torch.version)
    variant = release.variant(tag.group(1)) if release else None
    return f" --index-url {variant.index_url}" if variant else ""


def _fix(facts: Facts, installed: Dict[str, Distribution], framework: str, fw: Optional[Distribution],
         group: List[Mismatch]) -> List[str]:
    if fw is None:
        return [f"Reinstall {', '.join(m.companion.name for m in group)} for the {framework} you use."]
    base = fw.version.split("+")[0]
    if framework == "jax":
        extra = _jax_extra(fw, installed)
        return [f'{pip(facts)} install -U "jax{extra}=={base}"'
                f"  # jaxlib and the CUDA plugin at the versions jax {base} requires"]
    steps: List[str] = []
    pins = [m for m in group if m.kind == "framework-pin"]
    rest = [m for m in group if m.kind in ("pin", "variant")]
    pyg = [m for m in group if m.kind == "pyg"]
    aligned = {m.companion.key for m in rest + pyg}  # a companion the steps above replace needs no rebuild
    runtime = [m for m in group if m.kind in ("runtime", "abi") and m.companion.key not in aligned]
    if pins:
        steps.append(f"{pip(facts)} install " + " ".join(f'"{m.companion.name}{m.specifier}"' for m in pins)
                     + f"  # what {fw.name} {fw.version} requires")
    if rest:
        index = _torch_index(fw) if framework == "torch" else ""
        if all(m.kind == "variant" for m in rest):
            names = " ".join(f"{m.companion.name}=={m.companion.version.split('+')[0]}" for m in rest)
            steps.append(f"{pip(facts)} install --force-reinstall --no-deps {names}{index}"
                         + ("" if index else f"  # from the index of {fw.name} {fw.version}'s CUDA variant"))
        else:
            others = " ".join(f'"{m.companion.name}!={m.companion.version}"' for m in rest)
            steps.append(f'{pip(facts)} install "{fw.name}=={base}" {others}{index}  # pip picks the '
                         f"versions whose pins match {fw.name} {base}")
    indexed = [m for m in runtime if m.companion.key not in SOURCE_ONLY]
    if indexed:
        names = " ".join(dict.fromkeys(m.companion.name for m in indexed))
        steps.append(f"{pip(facts)} install --force-reinstall --no-cache-dir --no-build-isolation {names}"
                     f"  # rebuilt (or its wheel for this torch and CUDA picked) against {fw.name} {fw.version}")
    for key in dict.fromkeys(m.companion.key for m in runtime if m.companion.key in SOURCE_ONLY):
        steps.append(f"Rebuild {key} from its source against {fw.name} {fw.version} (it is not on the package index "
                     f"under that name): {SOURCE_ONLY[key]}")
    for m in pyg:
        tag = _CUDA_TAG.search(fw.version)
        variant = tag.group(1) if tag else "cpu"
        mm = ".".join(base.split(".")[:2])
        # PyG's documented wheel index: https://data.pyg.org/whl/torch-${TORCH}+${CUDA}.html
        steps.append(f"{pip(facts)} install --force-reinstall --no-deps {m.companion.name} "
                     f"-f https://data.pyg.org/whl/torch-{mm}.0+{variant}.html")
    return steps


RULES = [companion_conflicts]
