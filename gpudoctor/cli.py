"""The `gpudoctor` command line: one subcommand per module in gpudoctor/commands."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import List, Optional

from . import __version__

COMMANDS = ["check", "report", "explain", "diff", "compat", "codes", "fleet", "health", "gpus"]
# Import names of the runtime dependencies (pyproject.toml): a missing one is an install problem,
# not a gpudoctor bug, and is reported as such.
DEPENDENCIES = ("rich", "packaging", "pynvml", "tomli")


def build_parser(argv: Optional[List[str]] = None) -> argparse.ArgumentParser:
    """The parser; with `argv` naming a command, only that command's module is imported (a check
    should not pay for importing the explain catalogue or the compat tables before it starts)."""
    parser = argparse.ArgumentParser(
        prog="gpudoctor",
        description="Can my frameworks use my NVIDIA GPU, and if not, what is wrong and what do I type to fix it?",
        epilog="Start with `gpudoctor check`. Every finding code is explained by `gpudoctor codes CODE`.")
    parser.add_argument("--version", action="version", version=f"gpudoctor {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    first = next((a for a in argv or [] if not a.startswith("-")), None)
    for name in [first] if first in COMMANDS else COMMANDS:
        importlib.import_module(f"gpudoctor.commands.{name}").register(subparsers)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    if sys.stdout is None:  # started with stdout closed (`>&-`): nowhere to write the answer
        print("gpudoctor: standard output is closed; nothing can be printed", file=sys.stderr)
        return 2
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args))
    except ModuleNotFoundError as exc:
        package = (exc.name or "").split(".")[0]
        if package not in DEPENDENCIES:
            return _internal_error(exc, argv)
        print(f"gpudoctor: the Python package '{package}' that gpudoctor needs is not installed for "
              f"{sys.executable}.\nInstall gpudoctor with its dependencies into this Python: "
              f"`{sys.executable} -m pip install .` in gpudoctor's source folder (its dependencies come with it).",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gpudoctor: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # exit 2 is the contract for an internal failure; say so, no traceback
        return _internal_error(exc, argv)


def _internal_error(exc: BaseException, argv: List[str]) -> int:
    print(f"gpudoctor: internal error: {exc.__class__.__name__}: {exc}\n"
          "This is a bug in gpudoctor; please report it with `gpudoctor check -v --json` output.", file=sys.stderr)
    if "-v" in argv or "--verbose" in argv:
        import traceback
        traceback.print_exception(type(exc), exc, exc.__traceback__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
