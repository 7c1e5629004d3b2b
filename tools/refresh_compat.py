"""Propose compat/ rows for releases the tables do not cover yet, read from the released wheels.

    python tools/refresh_compat.py              # a unified diff of compat/*.toml, and a report
    python tools/refresh_compat.py --write      # apply the proposed rows
    python tools/refresh_compat.py --no-archs   # skip the arch list (it streams libtorch_cuda.so)

A maintainer script, never installed and never run at check time. For each release newer than a
table's coverage it reads the index's JSON metadata, then only the members of one Linux x86_64
wheel that a row needs, with HTTP range requests: METADATA (Requires-Python, Requires-Dist pins),
torch/version.py, and the fat-binary headers of torch/lib/libtorch_cuda.so. Every proposed row names
that wheel (file name and sha256 from the index). Rows that came from an official table are never
overwritten: where the wheel disagrees with one, the disagreement is reported. Standard library only.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

if __package__ in (None, ""):  # run as a script: make `tools` and `gpudoctor` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpudoctor.compat.loader import Tables, load_tables  # noqa: E402
from tools import index_json, wheel_facts  # noqa: E402
from tools.index_json import WheelFile, vkey  # noqa: E402
from tools.wheel_range import HttpRange, WheelReadError, central_directory  # noqa: E402

PACKAGES = ("torch", "torchvision", "torchaudio", "tensorflow", "jax", "jaxlib", "jax-cuda12-plugin",
            "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax-cuda13-pjrt", "cupy-cuda12x", "cupy-cuda13x",
            "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13")
JAX_PLUGINS = ("jax-cuda12-plugin", "jax-cuda13-plugin")
TORCH_NOTE = ("Read by tools/refresh_compat.py from the released default wheel; the other CUDA variants are "
              "on PyTorch's own index and are not read here.")
JAX_RELEASES_PER_PLUGIN = 12  # a first run records about a year of releases; later runs add the new ones
CUDA_RUNTIME_WHEELS = ("nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime")


@dataclass
class Proposal:
    """What one run found: TOML text to add per table, and lines for the maintainer."""

    blocks: Dict[str, List[str]] = field(default_factory=dict)  # table -> TOML blocks (newest first)
    coverage: Dict[Tuple[str, str], str] = field(default_factory=dict)  # (table, subject) -> newest
    report: List[str] = field(default_factory=list)
    disagreements: List[str] = field(default_factory=list)

    def add(self, table: str, block: str) -> None:
        self.blocks.setdefault(table, []).append(block)


@dataclass
class Source:
    """Where the bytes come from: the index's JSON and range reads on wheels (tests pass saved ones)."""

    project: Callable[[str], Dict[str, Any]]
    fetch_for: Callable[[WheelFile], Callable[[int, int], bytes]]
    downloaded: Callable[[], int] = lambda: 0


def _q(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def wheel_metadata(src: Source, wheel: WheelFile) -> wheel_facts.Metadata:
    """A wheel's METADATA, read with range requests (its central directory, then that one member)."""
    fetch = src.fetch_for(wheel)
    text = wheel_facts.member_text(fetch, central_directory(fetch, wheel.size), ".dist-info/METADATA")
    return wheel_facts.parse_metadata(text or "")


def wheel_source(w: WheelFile) -> str:
    return f"wheel {w.filename} (sha256 {w.sha256})"


# -- torch -----------------------------------------------------------------------------------
def _cuda_of_pins(pins: Dict[str, str]) -> Optional[str]:
    """The CUDA version the default torch wheel pins: cuda-toolkit==13.2.2 (from 2.15) or
    nvidia-cuda-runtime(-cu12)==12.8.90."""
    for name in ("cuda-toolkit", "nvidia-cuda-runtime", "nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime-cu12",
                 "nvidia-cuda-runtime-cu11"):
        v = wheel_facts.exact_pin(pins.get(name, ""))
        if v:
            return v
    return None


def _cudnn_of_pins(pins: Dict[str, str]) -> Optional[str]:
    for name, spec in pins.items():
        if name.startswith("nvidia-cudnn"):
            return wheel_facts.exact_pin(spec)
    return None


def torch_block(version: str, wheel: WheelFile, md: wheel_facts.Metadata, version_py: Dict[str, str],
                pythons: List[str], archs: Optional[List[str]], arch_note: str) -> Tuple[str, List[str]]:
    """The [[release]] block of a torch release read from its default wheel, and disagreements."""
    notes: List[str] = []
    pins = wheel_facts.pins(md)
    pinned = _cuda_of_pins(pins)
    built = version_py.get("cuda") or None
    if pinned and built and ".".join(pinned.split(".")[:2]) != built:
        notes.append(f"torch {version}: version.py says CUDA {built}, the Requires-Dist pins CUDA {pinned}")
    cuda = built or (".".join(pinned.split(".")[:2]) if pinned else None)
    src = wheel_source(wheel)
    lines = ["[[release]]", f"version = {_q(version)}",
             "python = [" + ", ".join(_q(p) for p in pythons) + "]"]
    if cuda:
        lines.append(f'default_variant = "cu{cuda.replace(".", "")}"')
    lines.append(f"source = {_q(f'{src}: Requires-Python {md.requires_python or None}; python = CPython versions with a Linux x86_64 wheel on the index (free-threaded builds left out)')}")
    lines.append("note = " + _q(TORCH_NOTE))
    if cuda:
        lines += ["", "[[release.variant]]", f'name = "cu{cuda.replace(".", "")}"', f"cuda = {_q(cuda)}"]
        cudnn = _cudnn_of_pins(pins)
        if cudnn:
            lines.append(f"cudnn = {_q(cudnn)}")
        lines.append(f'command = {_q(f"pip install torch=={version}")}')
        if archs:
            lines.append("arch_list = [" + ", ".join(_q(a) for a in archs) + "]")
            lines.append(f"arch_source = {_q(f'{src}: fat-binary headers of torch/lib/libtorch_cuda.so ({arch_note})')}")
        pin_text = ", ".join(f"{k}{v}" for k, v in sorted(pins.items()) if k.startswith(("cuda-toolkit", "nvidia-cu")))
        lines.append(f"source = {_q(f'{src}: torch/version.py cuda = {built!r}; Requires-Dist {pin_text}')}")
    return "\n".join(lines) + "\n", notes


def _torch(src: Source, t: Tables, prop: Proposal, archs: bool, newest_only: bool) -> None:
    doc = src.project("torch")
    releases = index_json.final_releases(doc)
    known = {r.version: r for r in t.torch}
    cover = max((c.newest for c in t.coverage if c.subject == "torch"), key=vkey, default="0")
    for version in sorted(releases, key=vkey, reverse=True):
        row = known.get(version)
        wheel_derived = row is not None and not row.variants and "METADATA" in row.source
        if vkey(version) <= vkey(cover) and not wheel_derived:
            if row is not None and vkey(version) >= (2, 0):
                _compare_torch(src, releases[version], row, prop)
            continue
        wheel = index_json.linux_x86_64_wheel(releases[version])
        if wheel is None:
            prop.report.append(f"torch {version}: no Linux x86_64 wheel on the index; no row")
            continue
        fetch = src.fetch_for(wheel)
        members = central_directory(fetch, wheel.size)
        md = wheel_facts.parse_metadata(wheel_facts.member_text(fetch, members, ".dist-info/METADATA") or "")
        vpy = wheel_facts.python_assignments(wheel_facts.member_text(fetch, members, "torch/version.py") or "")
        arch_list, note = None, ""
        lib = members.get("torch/lib/libtorch_cuda.so")
        if archs and lib is not None:
            found = wheel_facts.library_archs(fetch, lib)
            arch_list = found.arch_list() or None
            note = (f"the archs of at least half of the first {found.containers} fatbin containers; "
                    f"special kernels also carry sm {found.extra() or 'none'}")
        block, notes = torch_block(version, wheel, md, vpy, index_json.python_versions(releases[version]), arch_list, note)
        if row is not None:
            prop.report.append(f"torch {version}: replaces the wheel-derived row (no variants) with a complete one")
            prop.blocks.setdefault("pytorch:replace", []).append(version)
        prop.add("pytorch", block)
        prop.disagreements += notes
        prop.coverage[("pytorch", "torch")] = max(version, prop.coverage.get(("pytorch", "torch"), "0"), key=vkey)
        if newest_only:
            break


def _compare_torch(src: Source, wheels: List[WheelFile], row: Any, prop: Proposal) -> None:
    """A table row against its default wheel's pins: report, never overwrite."""
    wheel = index_json.linux_x86_64_wheel(wheels)
    if wheel is None:
        return
    try:
        md = wheel_metadata(src, wheel)
    except (WheelReadError, OSError) as exc:
        prop.report.append(f"torch {row.version}: {wheel.filename} unreadable ({exc})")
        return
    pins = wheel_facts.pins(md)
    cuda = _cuda_of_pins(pins)
    name = f"cu{''.join(cuda.split('.')[:2])}" if cuda else None
    if name and row.default_variant and name != row.default_variant:
        prop.disagreements.append(f"torch {row.version}: table default variant {row.default_variant}, "
                                  f"{wheel.filename} pins CUDA {cuda} ({name}); table row kept")
    elif name and not row.default_variant and row.variant(name):
        prop.report.append(f"torch {row.version}: {wheel.filename} pins CUDA {cuda}: its default variant is {name} "
                           "(not recorded in the table)")
    variant = row.variant(row.default_variant or name or "")
    if variant is None:
        return
    cudnn = _cudnn_of_pins(pins)
    if cudnn and variant.cudnn and cudnn != variant.cudnn:
        prop.disagreements.append(f"torch {row.version} {variant.name}: table cuDNN {variant.cudnn} "
                                  f"({variant.source[:60]}...), wheel pins {cudnn} ({wheel.filename}); table row kept")


# -- TensorFlow, JAX, CUDA wheels ------------------------------------------------------------
def _tensorflow(src: Source, t: Tables, prop: Proposal) -> None:
    releases = index_json.final_releases(src.project("tensorflow"))
    have = {a.version for a in t.tf_and_cuda}
    series = {".".join(r.version.split(".")[:2]) for r in t.tf_tested if r.platform == "linux"}
    for version in sorted(releases, key=vkey):
        if vkey(version) < (2, 14) or version in have:
            continue
        wheel = index_json.linux_x86_64_wheel(releases[version])
        if wheel is None:
            continue
        md = wheel_metadata(src, wheel)
        extra = wheel_facts.pins(md, "and-cuda")
        runtime = next((wheel_facts.exact_pin(v) for k, v in extra.items() if k.startswith("nvidia-cuda-runtime")), None)
        cudnn = _cudnn_of_pins(extra)
        tested = ".".join(version.split(".")[:2]) in series
        if runtime and cudnn:
            pins = ", ".join(f"{_q(k)} = {_q(wheel_facts.exact_pin(v) or v)}" for k, v in sorted(extra.items()))
            prop.add("tensorflow", "\n".join([
                "[[and_cuda]]", f"version = {_q(version)}", f"requires_python = {_q(md.requires_python)}",
                f"cuda_runtime = {_q(runtime)}", f"cudnn = {_q(cudnn)}", f"pins = {{ {pins} }}",
                f"source = {_q(wheel_source(wheel) + ': METADATA Requires-Dist, extra and-cuda')}"]) + "\n")
        else:
            ranges = ", ".join(f"{k}{v}" for k, v in sorted(extra.items()))
            prop.report.append(f"tensorflow {version}: and-cuda uses ranges ({ranges or 'no CUDA extra'}); "
                               "no [[and_cuda]] row (the schema holds exact pins)")
        if not tested:
            prop.report.append(f"tensorflow {version}: series not in the tested-configurations table; "
                               "add its row from tensorflow.org/install/source#gpu (the wheel does not state it)")


def _jax(src: Source, t: Tables, prop: Proposal) -> None:
    have = {(r.package, r.version) for r in t.jax_releases}
    cover = max((c.newest for c in t.coverage if c.subject == "jax"), key=vkey, default="0")
    blocks: List[Tuple[str, str]] = []
    for package in JAX_PLUGINS:
        releases = index_json.final_releases(src.project(package))
        newest = sorted(releases, key=vkey, reverse=True)[:JAX_RELEASES_PER_PLUGIN]
        for version in newest:
            if (package, version) in have or (have and vkey(version) <= vkey(cover)):
                continue
            wheel = index_json.linux_x86_64_wheel(releases[version])
            if wheel is None:
                continue
            md = wheel_metadata(src, wheel)
            cuda = {k: v for k, v in wheel_facts.pins(md, "with-cuda").items() if k.startswith("nvidia-")}
            reqs = ", ".join(f"{_q(k)} = {_q(v)}" for k, v in sorted(cuda.items()))
            blocks.append((version, "\n".join([
                "[[release]]", f"package = {_q(package)}", f"version = {_q(version)}",
                f"requires_python = {_q(md.requires_python)}", f"requires = {{ {reqs} }}",
                f"source = {_q(wheel_source(wheel) + ': METADATA Requires-Python and Requires-Dist, extra with-cuda')}"]) + "\n"))
    for version, block in sorted(blocks, key=lambda b: vkey(b[0]), reverse=True):
        prop.add("jax", block)
        prop.coverage[("jax", "jax")] = max(version, prop.coverage.get(("jax", "jax"), "0"), key=vkey)


def _cuda_wheels(src: Source, t: Tables, prop: Proposal) -> None:
    """CUDA minors that NVIDIA's runtime wheels have and the driver table has not: reported only, since
    a minimum driver comes from NVIDIA's release notes (Table 3), never from a wheel."""
    known = {r.cuda for r in t.toolkit_drivers}
    for package in CUDA_RUNTIME_WHEELS:
        minors = sorted({".".join(v.split(".")[:2]) for v in index_json.final_releases(src.project(package))}, key=vkey)
        missing = [m for m in minors if m not in known and vkey(m) > max(vkey(k) for k in known)]
        if missing:
            prop.report.append(f"{package}: CUDA {', '.join(missing)} wheels exist; the driver table stops at "
                               f"{max(known, key=vkey)}: read their minimum drivers from NVIDIA's release notes Table 3")


def _others(src: Source, t: Tables, prop: Proposal) -> None:
    for package in PACKAGES:
        if package in ("torch", "tensorflow") or package in JAX_PLUGINS or package in CUDA_RUNTIME_WHEELS:
            continue
        releases = index_json.final_releases(src.project(package))
        if releases:
            newest = max(releases, key=vkey)
            prop.report.append(f"{package}: newest final release {newest} ({releases[newest][0].upload_time})")


# -- applying --------------------------------------------------------------------------------
def _apply(text: str, table: str, prop: Proposal, today: str) -> str:
    for version in prop.blocks.get("pytorch:replace", []) if table == "pytorch" else []:
        text = re.sub(r'\[\[release\]\]\nversion = "%s"\n(?:(?!\[\[release\]\]).*\n)*?(?=\[\[release\]\])' % re.escape(version),
                      "", text, count=1)
    new = prop.blocks.get(table, [])
    if new:
        first = {"pytorch": "[[release]]", "jax": "[[release]]"}.get(table)
        joined = "\n".join(new) + "\n"
        at = text.find(first + "\n") if first else -1
        text = text[:at] + joined + text[at:] if at >= 0 else text.rstrip("\n") + "\n\n" + joined
    for (tab, subject), newest in prop.coverage.items():
        if tab == table:
            text = re.sub(r'(\[\[coverage\]\]\nsubject = "%s"\nnewest = )"[^"]*"(\nread = )"[^"]*"' % re.escape(subject),
                          lambda m: f'{m.group(1)}"{newest}"{m.group(2)}"{today}"', text, count=1)
    return text


def propose(src: Source, t: Tables, archs: bool = True, newest_only: bool = False) -> Proposal:
    prop = Proposal()
    _torch(src, t, prop, archs, newest_only)
    _tensorflow(src, t, prop)
    _jax(src, t, prop)
    _cuda_wheels(src, t, prop)
    _others(src, t, prop)
    return prop


def render(compat_dir: Path, prop: Proposal, write: bool, today: str) -> str:
    """The unified diff of every table the proposal changes (and the files rewritten with --write)."""
    out = []
    for path in sorted(compat_dir.glob("*.toml")):
        old = path.read_text()
        new = _apply(old, path.stem, prop, today)
        if new != old:
            out += difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/compat/{path.name}", f"b/compat/{path.name}")
            if write:
                path.write_text(new)
    return "".join(out)


def http_source(base: str) -> Tuple[Source, List[HttpRange], List[int]]:
    ranges: List[HttpRange] = []
    json_bytes = [0]

    def project(name: str) -> Dict[str, Any]:
        doc = index_json.fetch_project(base, name)
        json_bytes[0] += doc.pop("_bytes", 0)
        return doc

    def fetch_for(w: WheelFile) -> HttpRange:
        r = HttpRange(w.url, w.size)
        ranges.append(r)
        return r

    src = Source(project, fetch_for, lambda: json_bytes[0] + sum(r.downloaded for r in ranges))
    return src, ranges, json_bytes


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compat-dir", type=Path, default=Path(__file__).resolve().parent.parent / "compat")
    ap.add_argument("--index-json", help="the index's JSON API base (default: pip's default index)")
    ap.add_argument("--write", action="store_true", help="apply the proposed rows to the TOML files")
    ap.add_argument("--no-archs", action="store_true", help="do not read arch lists (no library streaming)")
    args = ap.parse_args(argv)
    started = time.monotonic()
    tables = load_tables(args.compat_dir)
    src, ranges, _ = http_source(args.index_json or index_json.default_json_base())
    prop = propose(src, tables, archs=not args.no_archs)
    today = datetime.date.today().isoformat()
    diff = render(args.compat_dir, prop, args.write, today)
    sys.stdout.write(diff or "# no new rows\n")
    for line in prop.report:
        print(f"# {line}", file=sys.stderr)
    for line in prop.disagreements:
        print(f"# DISAGREEMENT: {line}", file=sys.stderr)
    print(f"# {time.monotonic() - started:.1f} s, {src.downloaded() / 1e6:.1f} MB downloaded in "
          f"{sum(r.requests for r in ranges)} range requests over {len(ranges)} wheels", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
