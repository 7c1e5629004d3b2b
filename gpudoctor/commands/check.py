"""`gpudoctor check`: probe every layer, diagnose, report."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, List, Optional

if TYPE_CHECKING:
    from rich.console import Console

    from ..pipeline import CheckOptions, Report

DEFAULT_TIMEOUT = 30.0
DEFAULT_QUICK_TIMEOUT = 5.0


def register(subparsers: "argparse._SubParsersAction") -> None:
    parser = subparsers.add_parser(
        "check", help="diagnose this machine's GPU stack and print fixes",
        description="Probe every layer from the GPU on the PCI bus to the frameworks, name the root cause "
                    "and print the fix. Exit status: 0 no error, 1 at least one error finding, 2 usage error "
                    "or an internal failure.")
    parser.add_argument("--json", action="store_true", help="print one JSON object (the report contract) instead")
    parser.add_argument("--quick", action="store_true",
                        help="static facts only: no framework import, no GPU operation (well under a second)")
    parser.add_argument("--python", metavar="PATH",
                        help="examine the environment of this Python interpreter (a conda env, a venv)")
    parser.add_argument("--timeout", metavar="SECONDS", type=_positive_float,
                        help=f"time allowed to each probe (default {DEFAULT_TIMEOUT:g}, "
                             f"{DEFAULT_QUICK_TIMEOUT:g} with --quick)")
    parser.add_argument("--wide", action="store_true",
                        help="tables in full (whole library paths), however wide the terminal")
    parser.add_argument("--no-color", action="store_true", help="plain text output")
    parser.add_argument("-v", "--verbose", action="store_true", help="also show info findings and evidence")
    parser.set_defaults(handler=run)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("must be between 0 and 3600 seconds")
    return value


def run(args: argparse.Namespace) -> int:
    from ..pipeline import CheckOptions, run_check
    from ..target_python import NotAPython, validate_python

    try:
        python = validate_python(args.python)
    except NotAPython as exc:
        print(f"gpudoctor: {exc}", file=sys.stderr)
        return 2
    timeout = args.timeout or (DEFAULT_QUICK_TIMEOUT if args.quick else DEFAULT_TIMEOUT)
    options = CheckOptions(quick=args.quick, python=python, timeout=timeout)
    if args.json:  # scripts and hooks: plain JSON, no terminal library involved
        from ..renderers.json_report import render_json

        report = run_check(options)
        sys.stdout.write(render_json(report.to_json()) + "\n")
        return report.exit_code
    from rich.console import Console

    from ..renderers.terminal import render_terminal

    console = Console(no_color=args.no_color, highlight=False)
    report = _run_with_progress(console, options)
    render_terminal(console, report.facts, report.findings, report.verdict, args.verbose, _framework_lines(report),
                    wide=args.wide)
    return report.exit_code


def _run_with_progress(console: "Console", options: "CheckOptions") -> "Report":
    from ..pipeline import run_check

    if not console.is_terminal:
        return run_check(options)
    running: List[str] = []
    with console.status("Examining the GPU stack…") as status:
        def on_progress(name: str, state: str) -> None:
            if state == "started":
                running.append(name)
            elif name in running:
                running.remove(name)
            status.update(f"Examining the GPU stack… waiting for: {', '.join(running) or 'results'}")
        return run_check(options, on_progress)


def _framework_lines(report: "Report") -> List[str]:
    from ..renderers.framework_lines import readiness_lines

    return readiness_lines(report.facts, report.findings)
