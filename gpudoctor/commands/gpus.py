"""`gpudoctor gpus [--pick N]`: who uses which GPU on a shared server, and the freest GPUs.

Runs the NVML probe only (one short child process), so it answers in a fraction of a second and
can sit in a shell's `eval "$(gpudoctor gpus --pick 2)"`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import TYPE_CHECKING, Any, Dict, Optional

if TYPE_CHECKING:
    from ..facts import Facts

HELP = "the GPU table alone (cuda:N, nvidia-smi index, bus id, UUID, memory, who holds each GPU); --pick N"


def register(subparsers: "argparse._SubParsersAction") -> None:
    parser = subparsers.add_parser(
        "gpus", help=HELP, description="For shared servers: " + HELP + " prints `export CUDA_VISIBLE_DEVICES=...` "
        "for the N GPUs with the most free memory, most free first (use: eval \"$(gpudoctor gpus --pick 2)\").")
    parser.add_argument("--json", action="store_true", help="one JSON object: the GPUs, their processes, the mapping")
    parser.add_argument("--pick", type=_positive, metavar="N",
                        help="print the exports that select the N GPUs with the most free memory; exit 1 if fewer qualify")
    parser.add_argument("--min-free", type=_non_negative, default=0, metavar="MIB",
                        help="with --pick: only GPUs with at least this many MiB free")
    parser.add_argument("--uuid", action="store_true", help="with --pick: select by UUID instead of nvidia-smi index")
    parser.add_argument("--wide", action="store_true", help="do not shorten command lines in the table")
    parser.set_defaults(handler=run)


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text!r}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from ..gpus.collect import collect_gpu_facts, nvml_problem

    if (args.uuid or args.min_free) and args.pick is None:
        print("gpudoctor gpus: --uuid and --min-free go with --pick N", file=sys.stderr)
        return 2
    facts = collect_gpu_facts()
    problem = nvml_problem(facts)
    if args.json:
        print(json.dumps(_as_json(facts, problem), indent=2))
        return 1 if problem else 0
    if problem:
        print(f"gpudoctor gpus: cannot list the GPUs: {problem}. `gpudoctor check` says why.", file=sys.stderr)
        return 1
    if args.pick is not None:
        return _pick(facts, args)
    from rich.console import Console

    from ..gpus.render import gpus_table, notes, processes_table

    console = Console(width=100_000) if args.wide else Console()  # wide: one line per row, whatever the terminal
    console.print(gpus_table(facts, args.wide))
    processes = processes_table(facts, args.wide)
    console.print()
    console.print(processes if processes is not None else "No process holds GPU memory.")
    for note in notes(facts, args.wide):
        console.print(note)
    return 0


def _pick(facts: "Facts", args: argparse.Namespace) -> int:
    from ..gpus.pick import choose, exports_for, shortfall_message

    chosen = choose(facts.gpus, args.pick, args.min_free)
    if len(chosen) < args.pick:
        print(f"gpudoctor gpus: {shortfall_message(facts.gpus, chosen, args.pick, args.min_free)}; "
              "nothing exported", file=sys.stderr)
        return 1
    for name, value in exports_for(chosen, args.uuid).items():
        print(f"export {name}={shlex.quote(value)}")
    return 0


def _as_json(facts: "Facts", problem: Optional[str]) -> Dict[str, Any]:
    from ..facts.serialize import to_json
    from ..pipeline import SCHEMA_VERSION

    vis = facts.visible_devices
    logical = {m.physical_index: m.logical for m in vis.mapping}
    gpus = []
    for gpu in facts.gpus:
        entry = {"cuda": logical.get(gpu.index)}
        entry.update(to_json(gpu))
        gpus.append(entry)
    return {"schema": SCHEMA_VERSION, "error": problem, "driver_version": facts.driver.nvml.driver_version,
            "cuda_visible_devices": vis.cuda_visible_devices, "cuda_device_order": vis.cuda_device_order,
            "mapping_source": vis.mapping_source, "gpus": gpus}
