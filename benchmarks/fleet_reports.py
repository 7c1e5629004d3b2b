"""Write 10,000 saved reports (about 30 KB each) to a temp dir, run `gpudoctor fleet reports` on
them, print the seconds and the peak RSS of that process.

    python benchmarks/fleet_reports.py [--nodes 10000] [--keep]

The reports are one real `check --json --quick` report (of the simulated-GPU lab's healthy
4x RTX 2080 Ti machine when the lab can be built here, else of this machine) copied per node with
the per-node fields changed (host name, time, duration), padded with a synthetic pip package list
to the size of a report from a machine with a full training environment; every 100th node has
the kernel module of the lab's "upgrade without reboot" scenario (535.161.08 under 535.183.01), so
the outlier path is exercised. Budget (DESIGN.md): under 5 s and 200 MB.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict

ROOT = Path(__file__).resolve().parents[1]
TARGET_BYTES = 30_000


def _gpudoctor() -> list:
    beside = Path(sys.executable).with_name("gpudoctor")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "gpudoctor"]


def sample_report(tmp: Path) -> Dict[str, Any]:
    env = dict(os.environ)
    try:
        sys.path.insert(0, str(ROOT))
        from tests.lab import scenarios
        from tests.lab.build import build_libs

        scenario = scenarios.rtx2080ti_x4()
        env.update(GPUDOCTOR_LAB_SCENARIO=str(scenario.write_flat(tmp / "scenario.txt")),
                   GPUDOCTOR_SYSROOT=str(scenario.write_sysroot(tmp / "sysroot")), LD_LIBRARY_PATH=str(build_libs()))
    except Exception as exc:  # no compiler, no checkout: this machine's own report will do
        print(f"(lab unavailable: {exc}; using this machine's report)", file=sys.stderr)
    out = subprocess.run(_gpudoctor() + ["check", "--json", "--quick"], env=env, stdout=subprocess.PIPE,
                         check=False).stdout
    report = json.loads(out)
    packages = report["facts"].setdefault("frameworks", {}).setdefault("packages", {})
    i = 0
    while len(json.dumps(report, indent=2)) < TARGET_BYTES:
        packages[f"synthetic-package-{i:04d}"] = "1.0"
        i += 1
    return report


def write_reports(folder: Path, base: Dict[str, Any], nodes: int) -> int:
    odd = copy.deepcopy(base)
    odd["facts"]["driver"]["kernel"]["version"] = "535.161.08"
    total = 0
    for n in range(nodes):
        report = odd if n % 100 == 99 else base
        report["facts"]["system"]["hostname"] = f"gpu{n:05d}"
        report["duration_s"] = 0.3 + (n % 7) / 100
        text = json.dumps(report, indent=2)
        (folder / f"gpu{n:05d}.json").write_text(text)
        total += len(text)
    return total


def _tree_rss_kb(pid: int) -> int:
    """Resident memory of a process and its descendants, from /proc (0 once it is gone)."""
    total = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            total += next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = [int(c) for c in f.read().split()]
    except (OSError, ValueError):
        return total
    return total + sum(_tree_rss_kb(c) for c in children)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--keep", action="store_true", help="leave the reports in the temp dir")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gpudoctor-fleet-bench-"))
    try:
        folder = tmp / "reports"
        folder.mkdir()
        total = write_reports(folder, sample_report(tmp), args.nodes)
        print(f"{args.nodes} reports, {total / args.nodes / 1000:.1f} KB each on average, in {folder}")
        out = tmp / "fleet.json"
        started = time.perf_counter()
        with open(out, "wb") as f:
            proc = subprocess.Popen(_gpudoctor() + ["fleet", "reports", str(folder), "--json"], stdout=f)
            peak_tree = 0
            while proc.poll() is None:  # the command and its worker processes together
                peak_tree = max(peak_tree, _tree_rss_kb(proc.pid))
                time.sleep(0.02)
        seconds = time.perf_counter() - started
        peak_mb = max(peak_tree, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
        summary = json.loads(out.read_text())
        print(f"fleet reports: {seconds:.2f} s, peak RSS {peak_mb:.0f} MB (the process and its workers, summed), "
              f"exit {proc.returncode}, {summary['counts']['groups']} groups, {len(summary['outliers'])} outliers; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        return 0 if seconds < 5 and peak_mb < 200 else 1
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
