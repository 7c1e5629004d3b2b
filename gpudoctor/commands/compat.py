"""`gpudoctor compat`: answer compatibility questions from the compat tables.

    gpudoctor compat tensorflow 2.15        gpudoctor compat torch 2.4.1
    gpudoctor compat cuda 12.4              gpudoctor compat gpu "NVIDIA GeForce RTX 3090"
    gpudoctor compat --driver 470.82 [--python 3.10] [--compute-capability 8.6]

Readable output by default, `--json` for scripts (fields documented in compat/README.md).
Exit status: 0 answered, 2 usage error or a version/product the tables do not know.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any, Dict, List, Optional

from .. import compat as C

SUBJECTS = ("tensorflow", "torch", "cuda", "gpu")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("compat", help="look up versions in the compatibility tables",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("subject", nargs="?", choices=SUBJECTS, help="what to look up")
    p.add_argument("value", nargs="?", help="a version (2.15, 2.4.1, 12.4) or a GPU name")
    p.add_argument("--driver", help="NVIDIA driver version: newest CUDA, PyTorch and TensorFlow it can run")
    p.add_argument("--python", help="with --driver: only builds for this Python (e.g. 3.11)")
    p.add_argument("--compute-capability", help="with --driver: only builds with kernels for this GPU (e.g. 8.6)")
    p.add_argument("--os", default="linux", choices=("linux", "windows"), help="driver tables for this OS")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run)


class _Unknown(Exception):
    pass


def _newer(subject: str, version: str, what: str) -> Optional[Dict[str, Any]]:
    """The answer for a release newer than the tables: say which table stops where, infer nothing."""
    cov = C.newer_than_tables(subject, version)
    if cov is None:
        return None
    message = (f"{what} {version} is newer than gpudoctor's tables, which cover up to {cov.newest} "
               f"({cov.table}, read {cov.read}); no compatibility fact is inferred for it. Check its own "
               "release notes, or a newer gpudoctor.")
    if subject == "driver":  # a newer driver still runs what older ones ran: only the newest CUDA is unknown
        message = (f"Driver {version} is newer than the newest driver in gpudoctor's tables ({cov.newest}, "
                   f"{cov.table}, read {cov.read}): it runs every CUDA release listed below, and whether it "
                   "runs CUDA releases newer than the tables is not inferred.")
    return {"query": subject, "version": version, "newer_than_tables": {
        "table": cov.table, "newest": cov.newest, "read": cov.read, "source": cov.source, "message": message}}


def _answer(args: argparse.Namespace) -> Dict[str, Any]:
    if args.driver:
        if args.subject:
            raise ValueError("give either --driver or a subject, not both")
        return _driver(args.driver, args.python, args.compute_capability, args.os)
    if not args.subject or not args.value:
        raise ValueError("usage: gpudoctor compat {tensorflow,torch,cuda,gpu} VALUE | --driver VERSION")
    return {"tensorflow": _tensorflow, "torch": _torch, "cuda": _cuda, "gpu": _gpu}[args.subject](args.value, args.os)


def _tensorflow(version: str, os: str) -> Dict[str, Any]:
    r = C.tensorflow_release(version)
    newer = _newer("tensorflow", version, "TensorFlow")
    if newer:
        return newer
    if r is None:
        known = ", ".join(C.tensorflow_series())
        raise _Unknown(f"TensorFlow {version} is not in the tables (known: {known})")
    def tested(row: Optional[C.TfTested]) -> Optional[Dict[str, Any]]:
        if row is None:
            return None
        return {"version": row.version, "package": row.package, "python": list(row.python), "cuda": row.cuda,
                "cudnn": row.cudnn, "compiler": row.compiler, "build_tools": row.build_tools, "source": row.source}
    out: Dict[str, Any] = {"query": "tensorflow", "version": r.version, "python": list(r.python),
                           "linux": tested(r.linux), "windows": tested(r.windows), "and_cuda": None}
    if r.and_cuda:
        a = r.and_cuda
        out["and_cuda"] = {"version": a.version, "cuda_runtime": a.cuda_runtime, "cudnn": a.cudnn,
                           "pins": dict(a.pins), "command": f'pip install "tensorflow[and-cuda]=={a.version}"',
                           "source": a.source}
    return out


def _arch_cell(variant: Dict[str, Any]) -> str:
    """The arch list; where none is sourced, the supported range PyTorch states (not a list of kernels)."""
    if variant["arch_list"]:
        return " ".join(variant["arch_list"])
    if variant["capability_range"]:
        low, high = variant["capability_range"]
        return f"list unknown; supports {low} to {high}"
    return "unknown"


def _torch(version: str, os: str) -> Dict[str, Any]:
    r = C.torch_release(version)
    newer = _newer("torch", version, "PyTorch") if r is None else None
    if newer:
        return newer
    if r is None:
        raise _Unknown(f"PyTorch {version} is not in the tables")
    variants = [{"name": v.name, "cuda": v.cuda, "cudnn": v.cudnn, "experimental": v.experimental,
                 "arch_list": list(v.arch_list) or None, "arch_source": v.arch_source or None,
                 "capability_range": list(v.capability_range) or None,
                 "capability_range_source": v.capability_range_source or None,
                 "command": C.pip_command(r, v), "source": v.source}
                for v in r.variants]
    return {"query": "torch", "version": r.version, "python": list(r.python), "default_variant": r.default_variant,
            "variants": variants, "note": r.note or None, "source": r.source}


def _cuda(version: str, os: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {"query": "cuda", "version": version, "os": os}
    found = False
    for o in ("linux", "windows"):
        req = C.min_driver_for_cuda(version, o)
        if req is not None:
            found = True
            out[o] = {"toolkit_driver": req.toolkit_driver, "minor_version_compat_driver": req.minor_version_compat_driver}
            out["limits"] = list(req.limits)
            out["sources"] = list(req.sources)
    if not found:
        newer = _newer("cuda", version, "CUDA")
        if newer:
            return newer
        raise _Unknown(f"CUDA {version} is not in the tables (known: {', '.join(C.cuda_versions())})")
    out["releases"] = [{"release": r.release, "linux": r.linux, "windows": r.windows} for r in C.toolkit_releases(version)]
    b = C.cuda_build_archs(version)
    out["build_archs"] = None if b is None else {"min_compute_capability": b.min_compute_capability,
                                                 "dropped": list(b.dropped), "deprecated": list(b.deprecated),
                                                 "note": b.note, "source": b.source}
    return out


def _gpu(name: str, os: str) -> Dict[str, Any]:
    g = C.gpu_by_name(name)
    if g is None:
        raise _Unknown(f"GPU {name!r} is not in the tables; its compute capability is what NVML or "
                       "nvidia-smi --query-gpu=compute_cap reports")
    return {"query": "gpu", "name": name, "matched": g.name, "compute_capability": g.compute_capability,
            "architecture": g.architecture, "kind": g.kind, "source": g.source,
            "support": _gpu_support(g.compute_capability)}


def _gpu_support(compute_capability: str) -> Optional[Dict[str, Any]]:
    """How far this GPU's driver and CUDA can go (compat/gpu_generations.toml), None when unknown."""
    c = C.gpu_ceiling(compute_capability)
    return None if c is None else {
        "architecture": c.architecture, "last_driver_branch": c.last_driver_branch,
        "last_cuda_major": c.last_cuda_major, "newest_cuda": c.newest_cuda, "newest_cuda_full": c.newest_cuda_full,
        "source": c.source}


def _driver(driver: str, python: Optional[str], cc: Optional[str], os: str) -> Dict[str, Any]:
    if not C.versions.is_dotted(driver):
        raise ValueError(f"--driver must look like 470.82 or 535.104.05, not {driver!r}")
    nb = C.newest_builds_for_driver(driver, python, cc, os)
    newer = _newer("driver", driver, "Driver")
    return {"newer_than_tables": newer["newer_than_tables"] if newer else None,"query": "driver", "driver": driver, "os": os, "python": python, "compute_capability": cc,
            "newest_cuda": nb.cuda, "newest_cuda_full": nb.cuda_full,
            "torch": asdict(nb.torch) if nb.torch else None,
            "tensorflow": asdict(nb.tensorflow) if nb.tensorflow else None}


def _render(ans: Dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    con = Console()
    q = ans["query"]
    if ans.get("newer_than_tables") and "variants" not in ans and "linux" not in ans and q != "driver":
        con.print(ans["newer_than_tables"]["message"], markup=False)
        return
    if q == "tensorflow":
        con.print(f"[bold]TensorFlow {ans['version']}[/bold]  Python {', '.join(ans['python']) or 'unknown'}")
        for plat in ("linux", "windows"):
            row = ans[plat]
            if row:
                con.print(f"  {plat:8} {row['package']}-{row['version']}: CUDA {row['cuda']}, cuDNN {row['cudnn']} ({row['compiler']})", markup=False)
            elif plat == "windows":
                con.print("  windows  no native-Windows GPU build (TensorFlow >= 2.11: use WSL2)", markup=False)
        if ans["and_cuda"]:
            a = ans["and_cuda"]
            con.print(f"  wheels   {a['command']}  -> CUDA runtime {a['cuda_runtime']}, cuDNN {a['cudnn']}", markup=False)
    elif q == "torch":
        con.print(f"[bold]PyTorch {ans['version']}[/bold]  Python {', '.join(ans['python']) or 'unknown'}  "
                  f"default (PyPI) variant: {ans['default_variant'] or 'unknown'}")
        t = Table("variant", "CUDA", "cuDNN", "arch list")
        for v in ans["variants"]:
            t.add_row(Text(v["name"] + (" (exp.)" if v["experimental"] else "")), v["cuda"], v["cudnn"] or "?",
                      Text(_arch_cell(v)))
        con.print(t)
        # commands on lines of their own, outside the table's borders, so that selecting one copies it whole
        for v in ans["variants"]:
            con.print(f"  {v['name']}:", markup=False)
            con.print(f"    {v['command']}", markup=False, soft_wrap=True)
            con.print(f"    source: {v['source']}", markup=False, soft_wrap=True, style="dim")
            if v["arch_source"]:
                con.print(f"    arch list: {v['arch_source']}", markup=False, soft_wrap=True, style="dim")
            if v["capability_range_source"]:
                con.print(f"    supported range: {v['capability_range_source']}", markup=False, soft_wrap=True, style="dim")
    elif q == "cuda":
        con.print(f"[bold]CUDA {ans['version']}[/bold]")
        for o in ("linux", "windows"):
            if o in ans:
                d = ans[o]
                mvc = d["minor_version_compat_driver"] or "n/a (before CUDA 11)"
                con.print(f"  {o:8} toolkit driver >= {d['toolkit_driver'] or 'N/A'}; minor version compatibility >= {mvc}", markup=False)
        for r in ans["releases"]:
            con.print(f"  {r['release']}: Linux driver >= {r['linux']}" + (f", Windows >= {r['windows']}" if r["windows"] else ""), markup=False)
        if ans.get("limits"):
            con.print("  limits of minor version compatibility:", markup=False)
            for lim in ans["limits"]:
                con.print(f"    - {lim}", markup=False)
        b = ans["build_archs"]
        con.print(f"  builds for compute capability >= {b['min_compute_capability']}" if b else "  build archs: unknown", markup=False)
    elif q == "gpu":
        con.print(f"[bold]{ans['matched']}[/bold]: compute capability {ans['compute_capability']}, "
                  f"{ans['architecture'] or 'architecture unknown'} ({ans['kind']})")
        sup = ans.get("support")
        if sup and sup["last_driver_branch"]:
            con.print(f"  last driver branch R{sup['last_driver_branch']}; last CUDA toolkit {sup['last_cuda_major']}.x; "
                      f"newest CUDA runtime {sup['newest_cuda']} (every feature: {sup['newest_cuda_full']})", markup=False)
        elif sup:
            con.print("  supported by current drivers and CUDA toolkits", markup=False)
    elif q == "driver":
        con.print(f"[bold]Driver {ans['driver']}[/bold] ({ans['os']})")
        if ans.get("newer_than_tables"):
            con.print("  " + ans["newer_than_tables"]["message"], markup=False)
        con.print(f"  newest CUDA runtime: {ans['newest_cuda'] or 'none known'} (full toolkit features: {ans['newest_cuda_full'] or 'none known'})", markup=False)
        tb = ans["torch"]
        con.print(f"  newest PyTorch: {tb['version']} {tb['variant']}  →  {tb['command']}" if tb else "  newest PyTorch: none in the tables", markup=False)
        tf = ans["tensorflow"]
        con.print(f"  newest TensorFlow: {tf['version']} (CUDA {tf['cuda']})  →  {tf['command']}" if tf else "  newest TensorFlow: none in the tables", markup=False)


def run(args: argparse.Namespace) -> int:
    try:
        ans = _answer(args)
    except (_Unknown, ValueError) as exc:
        if getattr(args, "json", False):
            print(json.dumps({"error": str(exc)}))
        else:
            print(f"gpudoctor compat: {exc}", file=sys.stderr)
        return 2
    except C.CompatDataError as exc:
        print(f"gpudoctor compat: broken compat tables: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(ans, indent=2))
    else:
        _render(ans)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """`python -m gpudoctor.commands.compat ...` (works before the main CLI exists)."""
    parser = argparse.ArgumentParser(prog="gpudoctor")
    sub = parser.add_subparsers(dest="command")
    register(sub)
    args = parser.parse_args(["compat"] + list(sys.argv[1:] if argv is None else argv))
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
