"""`gpudoctor fleet slurm|ray|reports`: one check per node through an engine, the nodes compared."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, Iterable, List, Optional, Sequence, Tuple

if TYPE_CHECKING:
    from ..fleet.aggregate import FleetSummary, NodeAnswer

HELP = "check every node of a cluster through Slurm, Ray or saved reports, and name the nodes that differ"
DEFAULT_NODE_TIMEOUT = {False: 120.0, True: 30.0}  # a node's whole check, full and --quick


class _EngineArgsParser(argparse.ArgumentParser):
    """Keeps the options it does not know (srun's `-N 3`, `-w node[1-3]`, `-p gpu`) for the engine."""

    def parse_known_args(self, args: Optional[Sequence[str]] = None, namespace: Any = None
                         ) -> Tuple[argparse.Namespace, List[str]]:
        ns, extra = super().parse_known_args(args, namespace)
        ns.engine_args = [a for a in extra if a != "--"] if extra[:1] == ["--"] else list(extra)
        return ns, []


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("fleet", help=HELP, description=HELP[0].upper() + HELP[1:] + ". Exit status: 0 when "
                                   "every node answered with no error finding, 1 otherwise, 2 usage error.")
    engines = parser.add_subparsers(dest="engine", metavar="ENGINE", parser_class=_EngineArgsParser)
    slurm = engines.add_parser("slurm", allow_abbrev=False, help="one check per node through srun",
                               usage="gpudoctor fleet slurm [--quick] [--json] [--timeout S] [SRUN_ARGS...]",
                               description="Run `gpudoctor check --json` once per node with `srun "
                               "--ntasks-per-node=1 SRUN_ARGS` (e.g. `-N 3`, `-w node[1-3]`, `-p gpu`, or "
                               "nothing inside an allocation) and compare the nodes.")
    ray = engines.add_parser("ray", allow_abbrev=False, help="one check per alive Ray node",
                             description="Run `gpudoctor check --json` on every alive node of a Ray cluster "
                             "(a task pinned to each node, no CPU reserved) and compare the nodes. Needs "
                             "`pip install ray` (the optional extra `.[ray]` in gpudoctor's source folder).")
    ray.add_argument("--address", metavar="ADDR", default="auto",
                     help="the Ray cluster to join (default: auto, the one this machine belongs to)")
    reports = engines.add_parser("reports", allow_abbrev=False, help="compare saved check --json files",
                                 description="Compare saved `gpudoctor check --json` files (or folders of them), "
                                 "one per node, named by file name, from any launcher (pdsh, Ansible, a "
                                 "Kubernetes DaemonSet).")
    reports.add_argument("paths", nargs="+", metavar="PATH", help="report files, or folders of *.json reports")
    for sub in (slurm, ray, reports):
        sub.add_argument("--json", action="store_true", help="print the fleet as one JSON object")
        sub.set_defaults(handler=run)
    for sub in (slurm, ray):
        sub.add_argument("--quick", action="store_true", help="static facts only on each node (check --quick)")
        sub.add_argument("--timeout", metavar="S", type=_seconds,
                         help="a node that has not answered after S seconds is reported as silent (default "
                              f"{DEFAULT_NODE_TIMEOUT[False]:g}, {DEFAULT_NODE_TIMEOUT[True]:g} with --quick)")
    parser.set_defaults(handler=lambda args: _usage(parser))


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    if not 1 <= value <= 86400:
        raise argparse.ArgumentTypeError("must be between 1 and 86400 seconds")
    return value


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    print("gpudoctor fleet: name an engine: slurm, ray or reports", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from ..fleet.aggregate import FleetAggregator

    extra = getattr(args, "engine_args", [])
    if extra and args.engine != "slurm":
        print(f"gpudoctor fleet {args.engine}: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return 2
    aggregator = FleetAggregator(args.engine)
    try:
        aggregator.add_all(_answers(args, aggregator.notes))
    except _UsageError as exc:
        print(f"gpudoctor fleet {args.engine}: {exc}", file=sys.stderr)
        return 2
    summary = aggregator.finish()
    _render(summary, args.json)
    return summary.exit_code


class _UsageError(Exception):
    pass


def _answers(args: argparse.Namespace, notes: List[str]) -> Iterable["NodeAnswer"]:
    """The engine's answers, streamed; an engine's refusal to start becomes a usage error."""
    timeout = getattr(args, "timeout", None) or DEFAULT_NODE_TIMEOUT[bool(getattr(args, "quick", False))]
    if args.engine == "reports":
        from ..fleet.reports import check_paths, read_reports

        missing = check_paths(args.paths)
        if missing:
            raise _UsageError(f"{missing[0]}: no such file or folder")
        return read_reports(args.paths)
    if args.engine == "slurm":
        from ..fleet.slurm import SlurmUsageError, run_slurm

        return _guarded(run_slurm(args.engine_args, args.quick, timeout, notes), SlurmUsageError)
    from ..fleet.ray import RayUsageError, run_ray

    return _guarded(run_ray(args.address, args.quick, timeout, notes), RayUsageError)


def _guarded(answers: Iterable["NodeAnswer"], usage_error: type) -> Iterable["NodeAnswer"]:
    try:
        yield from answers
    except usage_error as exc:
        raise _UsageError(str(exc)) from None


def _render(summary: "FleetSummary", as_json: bool) -> None:
    from ..fleet.render import render_json, render_terminal

    if as_json:
        sys.stdout.write(render_json(summary) + "\n")
        return
    from rich.console import Console

    render_terminal(summary, Console(highlight=False))
