from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import List

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def gpudoctor(argv: List[str]) -> int:
    """Run a subcommand through its own register()/run(), as the integrator's CLI will."""
    from gpudoctor.commands import diff, report

    parser = argparse.ArgumentParser(prog="gpudoctor")
    sub = parser.add_subparsers(dest="command")
    report.register(sub)
    diff.register(sub)
    args = parser.parse_args(argv)
    return args.handler(args)

