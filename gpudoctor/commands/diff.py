"""`gpudoctor diff A B`: what differs between a machine that works and one that does not."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

HELP = "compare two saved reports (check --json output or gpudoctor report files): what differs"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "diff", help=HELP, description=HELP.capitalize() + ", ranked by how likely each difference is to "
        "explain a failure, and the findings one side has and the other has not.")
    parser.add_argument("a", metavar="A", help="the first report (e.g. the machine that works)")
    parser.add_argument("b", metavar="B", help="the second report (e.g. the machine that fails)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON, for tools")
    parser.add_argument("--all", action="store_true", help="show every difference, not only the first 30")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpudoctor.diff import diff_reports, render_terminal
    from gpudoctor.saved_report import SavedReportError, load_saved_report

    try:
        a, b = load_saved_report(args.a), load_saved_report(args.b)
    except SavedReportError as exc:
        print(f"gpudoctor diff: {exc}", file=sys.stderr)
        return 2
    try:
        result = diff_reports(a, b, args.a, args.b)
        if args.json:
            json.dump(result.to_json(), sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            from rich.console import Console

            render_terminal(result, Console(), limit=None if args.all else 30)
    except Exception as exc:  # a bug of ours: one line, never a traceback
        print(f"gpudoctor diff: internal error: {exc!r}", file=sys.stderr)
        return 2
    return 0
