#!/usr/bin/env python3
"""Refresh gpudoctor/fixes/pip_names.toml: the pip package names (and versions) that fixes may name.

Maintainer tool, never run by gpudoctor itself or by the tests. Two sources:

  --from-list FILE   a registry listing (tab-separated: name, version, month, rank, summary; the
                     first line names the columns). Offline: keeps the latest version of each name.
  (default)          the package index itself, through its standard JSON API (PEP 691 + PEP 700:
                     every file of every release, with its size). The index is pip's: --index-url,
                     else $PIP_INDEX_URL, else pip's own default. Names: those already in the file
                     plus SEEDS.

Only names a fix can use are kept (FIX_NAMES below). A placeholder is dropped:
  - from the index: a release all of whose files (sdists or wheels) are smaller than PLACEHOLDER_BYTES.
    NVIDIA reserves names with such files: nvidia-cublas-cu110 0.0.1.dev5 is one 8 KB sdist whose
    setup.py raises ("a fake package to warn the user"), nvidia-cublas-cu13 0.0.0a0 a 1 KB empty
    wheel; every real build a fix can name (CUDA libraries, frameworks, ninja, pynvml) is larger. A name all of whose
    releases are placeholders, or that has none left, is dropped; otherwise its placeholder
    releases are left out of `versions`.
  - from a listing (no file sizes): a summary that says so (NVIDIA's "A fake package to warn the user
    ...", "Zero version placeholder", "DEPRECATED: Use X instead" shims) or a 0.0.x latest version.

    python tools/refresh_package_names.py --from-list /path/to/pypi.tsv
    python tools/refresh_package_names.py            # asks the index (one request per name)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.request
from pathlib import Path
from typing import Dict, Iterable, List, Optional

OUT = Path(__file__).resolve().parent.parent / "gpudoctor" / "fixes" / "pip_names.toml"
PLACEHOLDER_BYTES = 16_000
FIX_NAMES = re.compile(
    r"^(?:nvidia-[a-z0-9-]+|torch|torchvision|torchaudio|torchtext|xformers|keras|torch-scatter|torch-sparse|"
    r"torch-cluster|torch-spline-conv|torch-geometric|pyg-lib|tensorflow|tensorflow-gpu|tensorflow-cpu|"
    r"tensorflow-intel|tf-nightly|tf-keras|jax|jaxlib|jax-cuda\d+-(?:plugin|pjrt)|cupy|cupy-cuda\w+|"
    r"tensorrt(?:-[a-z0-9-]+)?|onnxruntime-gpu|ninja|pynvml|triton|paddlepaddle-gpu|cuda-python|numba|xgboost|"
    r"mmcv|mmcv-full|bitsandbytes|tensorflow-rocm|flash-attn|mamba-ssm|causal-conv1d|vllm|pytorch3d|auto-gptq|"
    r"exllamav2|flashinfer-python|sageattention|torch-tensorrt|natten|torchcodec|ultralytics|triton-windows|numpy|"
    r"fbgemm-gpu|torchrec|taichi)$")
PLACEHOLDER_SUMMARY = re.compile(r"fake package|placeholder|^deprecated: use |defensive-hold", re.I)
# A name whose newest release was replaced by an installer that raises (tensorflow-gpu 2.12.0:
# "Removed: please install tensorflow instead"): older releases are real, so the name stays, but a
# fix must pin one of them.
REMOVED_SUMMARY = re.compile(r"^removed\b", re.I)
SEEDS = ("nvidia-cuda-runtime-cu11", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime", "nvidia-cudnn-cu11",
         "nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "tensorflow", "tensorflow-gpu", "torch", "jax")
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def from_listing(path: Path) -> Dict[str, Dict[str, object]]:
    out: Dict[str, Dict[str, object]] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        next(fh, None)  # the column names
        for line in fh:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 2:
                continue
            name, version, summary = normalize(cols[0]), cols[1], cols[4] if len(cols) > 4 else ""
            if not FIX_NAMES.match(name) or PLACEHOLDER_SUMMARY.search(summary) or version.startswith("0.0."):
                continue
            out[name] = {"latest": version}
            if REMOVED_SUMMARY.search(summary):
                out[name]["latest_is_placeholder"] = True
    return out


def _version_of(filename: str, name: str) -> Optional[str]:
    """'tensorflow-gpu-2.12.0.tar.gz' / 'tensorflow_gpu-2.11.0-cp310-...whl' -> the version."""
    stem = re.sub(r"\.(?:tar\.gz|zip|tar\.bz2|whl)$", "", filename)
    spelled = "[-_.]".join(re.escape(part) for part in normalize(name).split("-"))
    m = re.match(rf"(?i){spelled}-([^-]+)", stem)
    return m.group(1) if m else None


def placeholder_release(files: List[Dict[str, object]]) -> bool:
    """Every file tiny: a name reserved by its owner, not a real build."""
    return bool(files) and all(int(f.get("size") or 0) < PLACEHOLDER_BYTES for f in files)


def releases(index_json: Dict[str, object], name: str) -> List[str]:
    """The releases of a name worth naming in a fix: not yanked, not placeholders."""
    by_version: Dict[str, List[Dict[str, object]]] = {}
    for f in index_json.get("files") or []:  # type: ignore[union-attr]
        if f.get("yanked"):
            continue
        v = _version_of(str(f.get("filename", "")), name)
        if v:
            by_version.setdefault(v, []).append(f)
    return [v for v, files in by_version.items() if not placeholder_release(files)]


def index_url(cli: Optional[str]) -> str:
    if cli:
        return cli
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    from pip._internal.models.index import PyPI  # pip's own default index, not written here

    return PyPI.simple_url


def from_index(names: Iterable[str], base: str) -> Dict[str, Dict[str, object]]:
    from packaging.version import InvalidVersion, Version

    def key(v: str):
        try:
            return (0, Version(v))
        except InvalidVersion:
            return (-1, Version("0"))

    out: Dict[str, Dict[str, object]] = {}
    for name in sorted(set(names)):
        req = urllib.request.Request(f"{base.rstrip('/')}/{name}/", headers={"Accept": SIMPLE_JSON})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                data = json.load(resp)
        except OSError as exc:
            print(f"{name}: {exc}; kept out", file=sys.stderr)
            continue
        versions = sorted(releases(data, name), key=key)
        every = sorted({v for f in data.get("files") or [] for v in [_version_of(str(f.get("filename", "")), name)]
                        if v}, key=key)
        if versions:
            out[name] = {"latest": every[-1], "versions": versions}
            if every[-1] not in versions:
                out[name]["latest_is_placeholder"] = True
        else:
            print(f"{name}: only placeholders; dropped", file=sys.stderr)
    return out


def current() -> Dict[str, Dict[str, object]]:
    if not OUT.is_file():
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    with open(OUT, "rb") as fh:
        return {k: v for k, v in tomllib.load(fh).items() if isinstance(v, dict)}


def _indexed_before() -> set:
    """The names the file's header says earlier runs asked the index about (kept when a run adds names)."""
    if not OUT.is_file():
        return set()
    found = re.search(r"JSON API \(every release\) for (.+?); a registry listing", OUT.read_text(encoding="utf-8"),
                      re.S)
    return {n.strip().lstrip("#").strip() for n in found.group(1).replace("\n", " ").split(",")} if found else set()


def write(entries: Dict[str, Dict[str, object]], source: str) -> None:
    lines = ["# Pip package names (and versions) that gpudoctor's fixes may name. GENERATED by",
             "# tools/refresh_package_names.py; do not edit by hand (its docstring says how placeholders",
             f"# are dropped). Source: {source}.", ""]
    for name in sorted(entries):
        e = entries[name]
        lines.append(f'["{name}"]')
        lines.append(f'latest = "{e["latest"]}"')
        if e.get("latest_is_placeholder"):
            lines.append("latest_is_placeholder = true")
        if e.get("versions"):
            lines.append("versions = [" + ", ".join(f'"{v}"' for v in e["versions"]) + "]")  # type: ignore
        lines.append("")
    OUT.write_text("\n".join(lines), encoding="utf-8")


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--from-list", type=Path, help="a registry listing (tsv) instead of asking the index")
    p.add_argument("--index-url", help="simple index to ask (default: pip's)")
    p.add_argument("--names", nargs="+", help="ask the index about these names only, keep the rest of the file")
    args = p.parse_args(argv)
    if args.from_list:
        entries = from_listing(args.from_list)
        source = f"the registry listing {args.from_list.name} (latest versions only)"
    else:
        entries = current()
        asked = args.names or [*entries, *SEEDS]
        if not args.names:
            entries = {}
        entries.update(from_index(asked, index_url(args.index_url)))
        asked_before = _indexed_before() if args.names else set()
        source = "the package index's JSON API (every release)" + (
            f" for {', '.join(sorted(asked_before | set(args.names)))}; a registry listing (latest only) for the rest"
            if args.names else "")
    write(entries, source)
    print(f"{len(entries)} names written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
