"""`gpudoctor explain [FILE|-]`: read an error log and print the root cause and the fix.

Exit status: 0 no error finding, 1 at least one error finding, 2 usage error or a file that
cannot be read. `--json` prints the same finding objects as `check --json`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from .. import __version__
from ..model import Finding, Severity, verdict_of

if TYPE_CHECKING:
    from rich.console import Console

SCHEMA_VERSION = "1"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "explain",
        help="read an error log (TensorFlow, PyTorch, JAX, CUDA) and name the root cause and the fix",
        description="Read a log from FILE or standard input and explain the GPU environment problem it shows.",
    )
    add_arguments(p)
    p.set_defaults(handler=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", default="-", metavar="FILE",
                   help="log file to read; '-' or nothing reads standard input")
    p.add_argument("--json", action="store_true", help="print a JSON report (same finding objects as check)")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    p.add_argument("--check", action="store_true",
                   help="also run the quick check on this machine and join both (run it where the error happened)")


def _read(path: str):
    from ..explain import explain_stream

    if path == "-":
        return explain_stream(sys.stdin.buffer, name="<stdin>")
    with open(path, "rb") as fh:
        return explain_stream(fh, name=path)


def _run_quick_check() -> Dict[str, Any]:
    from ..pipeline import CheckOptions, run_check

    return run_check(CheckOptions(quick=True)).to_json()


def run(args: argparse.Namespace) -> int:
    from ..explain import join_with_check

    try:
        result = _read(args.file)
    except OSError as exc:
        print(f"gpudoctor explain: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    findings: List[Finding] = result.findings
    check_note = None
    if getattr(args, "check", False):
        try:
            findings = join_with_check(findings, _run_quick_check())
        except Exception as exc:  # the check is a bonus: its failure must not hide the log's answer
            check_note = f"the quick check failed: {exc}"
    if args.json:
        report = json_report(result, findings, check=("joined" if args.check and not check_note else check_note))
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from rich.console import Console

        console = Console(no_color=args.no_color, highlight=False, soft_wrap=False,
                          force_terminal=None if not args.no_color else False)
        render_explain(console, result, findings, check_note)
    return 1 if any(f.severity == Severity.ERROR for f in findings) else 0


_STYLE = {Severity.ERROR: ("✖", "bold red"), Severity.WARNING: ("!", "bold yellow"), Severity.INFO: ("i", "bold cyan")}


def json_report(result: Any, findings: List[Finding], check: Optional[str]) -> Dict[str, Any]:
    """The `explain --json` object; `check`: "joined", the reason the quick check failed, or None."""
    return {
        "schema": SCHEMA_VERSION,
        "gpudoctor_version": __version__,
        "verdict": verdict_of(findings),
        "findings": [f.to_json() for f in findings],
        "source": dict(result.source_json(), check=check),
    }


def render_explain(console: "Console", result: Any, findings: List[Finding], check_note: Optional[str]) -> None:
    from rich.markup import escape

    from ..causes import tally_text
    from ..renderers.terminal import print_fix_steps

    stats = result.stats
    tally = f"; {tally_text(findings)}" if findings else ""
    console.print(f"[bold]gpudoctor explain[/bold] {escape(result.name)}: {stats.lines:,} lines read{tally}")
    if not findings:
        if result.notes:
            console.print("Nothing in this log points at a GPU environment problem; only messages known to be "
                          "harmless were found:")
            for n in result.notes:
                console.print(f"  • line {n.first_line}: {escape(n.meaning)}")
        else:
            console.print("Nothing recognisable: this log contains no GPU, driver or CUDA error that gpudoctor "
                          "knows. Run `gpudoctor check` on the machine for a full diagnosis.")
        return
    for i, f in enumerate(findings):
        mark, style = _STYLE[f.severity]
        role = "root cause" if i == 0 and f.caused_by is None else (f"caused by {f.caused_by}" if f.caused_by else "")
        line = f.evidence.get("line")
        where = f" (log line {line})" if line else ""
        console.print()
        console.print(f"[{style}]{mark} {escape(f.title)}[/{style}]  [dim]{f.code} · {f.layer.label}"
                      f"{' · ' + role if role else ''}{where}[/dim]")
        console.print(f"  {escape(f.detail)}")
        if f.evidence.get("text"):
            console.print(f"  [dim]> {escape(str(f.evidence['text'])[:200])}[/dim]")
        print_fix_steps(console, f.fix)
    if result.notes:
        console.print()
        console.print(f"[dim]Also seen, harmless: {', '.join(n.id for n in result.notes)}[/dim]")
    if check_note:
        console.print(f"[dim]Note: {escape(check_note)}[/dim]")


def main(argv: Optional[List[str]] = None) -> int:
    """Stand-alone entry for tests; the real `gpudoctor explain` is wired in gpudoctor/cli.py."""
    parser = argparse.ArgumentParser(prog="gpudoctor")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
