"""Benchmark the framework probes (DESIGN.md, "Performance budgets"): medians of several runs.

    python benchmarks/frameworks.py [--runs 5] [--python PATH]

Measures, for the target interpreter:
- the quick (static) framework probe: package metadata + version.py/build_info.py, no import;
- each framework's live probe alone (the "slowest single framework probe");
- the full framework probe (all installed frameworks' children in parallel);
- `python -m torch.utils.collect_env` (when torch is installed);
- `gpudoctor check --json` and `gpudoctor check --quick --json` (once the CLI exists).
Budgets: full check <= 1.2x the slowest single probe, and faster than collect_env with torch alone;
quick check < 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Callable, Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gpudoctor.probes.context import ProbeContext  # noqa: E402
from gpudoctor.probes.frameworks import probe_frameworks  # noqa: E402
from gpudoctor.probes.frameworks.live import probe_live  # noqa: E402
from gpudoctor.probes.frameworks.packages import probe_packages  # noqa: E402
from gpudoctor.probes.frameworks.static import read_static  # noqa: E402


def median_of(runs: int, func: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        func()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run_command(cmd: List[str]) -> Callable[[], object]:
    return lambda: subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def single_probe(ctx: ProbeContext, name: str) -> Callable[[], object]:
    def run() -> None:
        facts, _, dirs = probe_packages(ctx)
        frameworks = read_static(facts, dirs)
        probe_live(ctx, {name: frameworks[name]})
    return run


def gpudoctor_command(python: str) -> Optional[List[str]]:
    probe = subprocess.run([python, "-c", "import gpudoctor.cli"], capture_output=True)
    return [python, "-m", "gpudoctor"] if probe.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--python", default=sys.executable, help="the target interpreter")
    args = parser.parse_args()
    ctx = ProbeContext.from_environment(python=args.python, timeout=120)
    quick_ctx = ProbeContext.from_environment(python=args.python, timeout=120, quick=True)
    facts, _ = probe_frameworks(quick_ctx)
    installed = sorted(facts.frameworks)
    results: Dict[str, float] = {}
    results["framework probe, quick (static only)"] = median_of(args.runs, lambda: probe_frameworks(quick_ctx))
    for name in installed:
        results["framework probe, %s alone" % name] = median_of(args.runs, single_probe(ctx, name))
    results["framework probe, full (%s in parallel)" % "+".join(installed)] = \
        median_of(args.runs, lambda: probe_frameworks(ctx))
    if "torch" in installed:
        results["python -m torch.utils.collect_env"] = median_of(
            args.runs, run_command([args.python, "-m", "torch.utils.collect_env"]))
    cli = gpudoctor_command(sys.executable)
    if cli:
        target = ["--python", args.python]
        results["gpudoctor check --json"] = median_of(args.runs, run_command(cli + ["check", "--json"] + target))
        results["gpudoctor check --quick --json"] = median_of(
            args.runs, run_command(cli + ["check", "--quick", "--json"] + target))
    print("median of %d runs, %d CPU cores, target %s" % (args.runs, os.cpu_count() or 0, args.python))
    for label, seconds in results.items():
        print("  %-55s %7.3f s" % (label, seconds))
    singles = [v for k, v in results.items() if k.endswith(" alone")]
    full = next((v for k, v in results.items() if k.startswith("framework probe, full")), None)
    if singles and full:
        print("  full / slowest single probe: %.2fx (budget 1.2x)" % (full / max(singles)))
    check = results.get("gpudoctor check --json")
    if singles and check:
        print("  gpudoctor check / slowest single probe: %.2fx (budget 1.2x)" % (check / max(singles)))
    collect = results.get("python -m torch.utils.collect_env")
    if check and collect:
        print("  gpudoctor check / collect_env: %.2fx (budget < 1 with torch alone)" % (check / collect))
    if not cli:
        print("  (gpudoctor check: the CLI is not importable here yet; rerun once it is)")


if __name__ == "__main__":
    main()
