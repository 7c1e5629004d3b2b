"""Measure `gpudoctor check --quick` and `gpudoctor check` (median of several runs, wall time).

Budgets (DESIGN.md): --quick under 0.5 s on a 2-core machine; a full check within 1.2x of the
slowest single framework probe and faster than `python -m torch.utils.collect_env`.
Run by hand:  python benchmarks/bench_check.py [--runs 7] [--python PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import List, Optional


def wall_times(cmd: List[str], runs: int) -> List[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--python", help="target interpreter for check --python")
    args = parser.parse_args()
    gpudoctor = shutil.which("gpudoctor") or os.path.join(os.path.dirname(sys.executable), "gpudoctor")
    target = ["--python", args.python] if args.python else []
    rows = {
        "check --quick": [gpudoctor, "check", "--quick", "--json", *target],
        "check": [gpudoctor, "check", "--json", *target],
    }
    python = args.python or sys.executable
    if subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0:
        rows["python -m torch.utils.collect_env"] = [python, "-m", "torch.utils.collect_env"]
        rows["python -c 'import torch'"] = [python, "-c", "import torch"]
    if subprocess.run([python, "-c", "import tensorflow"], capture_output=True).returncode == 0:
        rows["python -c 'import tensorflow'"] = [python, "-c", "import tensorflow"]
    print(f"{'command':40} {'median s':>9} {'min s':>7} {'max s':>7}  (runs={args.runs}, cores={os.cpu_count()})")
    for label, cmd in rows.items():
        t = wall_times(cmd, args.runs)
        print(f"{label:40} {statistics.median(t):9.3f} {min(t):7.3f} {max(t):7.3f}")


if __name__ == "__main__":
    main()
