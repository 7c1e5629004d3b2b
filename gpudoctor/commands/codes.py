"""`gpudoctor codes [CODE]`: the documentation of finding codes (like `ruff rule`)."""

from __future__ import annotations

import argparse
import json


def register(subparsers: "argparse._SubParsersAction") -> None:
    parser = subparsers.add_parser("codes", help="explain finding codes",
                                   description="Print what a finding code means, how it is detected and fixed.")
    parser.add_argument("code", nargs="?", help="one code, e.g. driver-not-loaded (default: list them all)")
    parser.add_argument("--json", action="store_true", help="as JSON")
    parser.add_argument("--markdown", action="store_true", help="all codes as Markdown (docs/findings.md)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..codes import CATALOG, render_markdown

    if args.markdown:
        print(render_markdown())
        return 0
    entries = list(CATALOG.values())
    if args.code:
        if args.code not in CATALOG:
            close = [c for c in CATALOG if args.code in c or c in args.code]
            print(f"gpudoctor: unknown code {args.code!r}" + (f"; did you mean {', '.join(close)}?" if close else ""))
            return 2
        entries = [CATALOG[args.code]]
    if args.json:
        print(json.dumps([{"code": e.code, "layer": e.layer.value, "severity": e.severity.value, "title": e.title,
                           "meaning": e.meaning, "detection": e.detection, "fix": e.remedy} for e in entries], indent=2))
        return 0
    if not args.code:
        for e in entries:
            print(f"{e.code:28} {e.severity.value:8} {e.layer.value:17} {e.title}")
        return 0
    e = entries[0]
    print(f"{e.code} ({e.severity.value}, layer: {e.layer.value})\n\n{e.title}\n\nWhat it means\n  {e.meaning}\n\n"
          f"How it is detected\n  {e.detection}\n\nHow to fix\n  {e.remedy}")
    return 0
