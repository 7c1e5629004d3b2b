"""`gpudoctor report`: one redacted Markdown file to attach to a support ticket."""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import shlex
import sys
from typing import Any, Dict, List, Optional

HELP = "write a redacted Markdown report (with the JSON inside) to attach to a support ticket"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report", help=HELP, description=HELP.capitalize() + ". It runs the full check, or reads a saved "
        "`check --json` output or an earlier report with --from.")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="where to write the report ('-' for standard output); "
                             "default: gpudoctor-report-<UTC time>.md in the current directory")
    parser.add_argument("--from", dest="from_file", metavar="SAVED",
                        help="render a saved `gpudoctor check --json` output or an earlier report instead of checking")
    parser.add_argument("--no-redact", action="store_true",
                        help="keep user name, home directory, host name and IP addresses (secrets are never collected)")
    parser.add_argument("--quick", action="store_true", help="static facts only: no framework import, no GPU op")
    parser.add_argument("--python", metavar="PATH", help="check this interpreter's environment instead of gpudoctor's own")
    parser.add_argument("--timeout", metavar="S", type=float, default=30.0, help="seconds per probe (default: 30)")
    parser.set_defaults(handler=run)


def _now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def command_line(args: argparse.Namespace) -> str:
    """The command that made the report, rebuilt from the options (for the report's header)."""
    words: List[str] = ["gpudoctor", "report"]
    if getattr(args, "from_file", None):
        words += ["--from", args.from_file]
    else:
        if args.quick:
            words.append("--quick")
        if args.python:
            words += ["--python", args.python]
        if args.timeout != 30.0:
            words += ["--timeout", f"{args.timeout:g}"]
    if args.no_redact:
        words.append("--no-redact")
    if args.output:
        words += ["-o", args.output]
    return " ".join(shlex.quote(w) for w in words)


def _default_output(now: str) -> str:
    return "gpudoctor-report-" + now.replace("-", "").replace(":", "").replace("T", "-").rstrip("Z") + ".md"


def _check(args: argparse.Namespace) -> Dict[str, Any]:
    from gpudoctor.pipeline import CheckOptions, run_check  # imported here: `--from` needs no probe

    print("gpudoctor: running the " + ("quick" if args.quick else "full") + " check…", file=sys.stderr)
    return run_check(CheckOptions(quick=args.quick, python=args.python, timeout=args.timeout)).to_json()


def build_report(args: argparse.Namespace, now: Optional[str] = None) -> str:
    """The Markdown text; raises SavedReportError for a bad --from file."""
    from gpudoctor.privacy import redactor_for
    from gpudoctor.renderers.markdown import render_markdown
    from gpudoctor.saved_report import load_saved_report

    now = now or _now_utc()
    report = load_saved_report(args.from_file) if args.from_file else _check(args)
    cmd = command_line(args)
    if not args.no_redact:
        redactor = redactor_for(report)
        report, cmd = redactor.value(report), redactor.text(cmd)
    return render_markdown(report, command=cmd, generated_utc=now, redacted=not args.no_redact)


def run(args: argparse.Namespace) -> int:
    from gpudoctor.saved_report import SavedReportError

    if args.timeout <= 0:
        print("gpudoctor report: --timeout must be a positive number of seconds", file=sys.stderr)
        return 2
    if args.python and not getattr(args, "from_file", None):
        from gpudoctor.target_python import NotAPython, validate_python

        try:
            args.python = validate_python(args.python)
        except NotAPython as exc:
            print(f"gpudoctor report: {exc}", file=sys.stderr)
            return 2
    now = _now_utc()
    try:
        text = build_report(args, now)
    except SavedReportError as exc:
        print(f"gpudoctor report: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug of ours: say so in one line, never a traceback
        print(f"gpudoctor report: internal error while making the report: {exc!r}", file=sys.stderr)
        return 2
    output = args.output or _default_output(now)
    if output == "-":
        sys.stdout.write(text)
        return 0
    try:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        print(f"gpudoctor report: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"gpudoctor: report written to {os.path.abspath(output)} ({len(text.encode('utf-8')) // 1024 + 1} KB). "
          "Attach it to your ticket.", file=sys.stderr)
    return 0
