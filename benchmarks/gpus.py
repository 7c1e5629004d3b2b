"""Measure `gpudoctor gpus` (table, --json, --pick 2) on the simulated shared server (tests/lab):
median wall time of several runs. Budget (DESIGN.md): under 0.3 s, no framework import.

With --real, it runs on this machine as it is (its own driver and GPUs) instead of the lab.
Run by hand from the repository root:  python benchmarks/gpus.py [--runs 15] [--real]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def lab_environment(workdir: str) -> Dict[str, str]:
    from tests.e2e.test_lab_gpus import shared_server
    from tests.lab.build import build_libs

    scenario = shared_server()
    flat, root = os.path.join(workdir, "scenario.txt"), os.path.join(workdir, "sysroot")
    scenario.write_flat(flat)
    scenario.write_sysroot(root)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    env.update(GPUDOCTOR_LAB_SCENARIO=flat, GPUDOCTOR_SYSROOT=root, LD_LIBRARY_PATH=str(build_libs()))
    return env


def wall_times(cmd: List[str], env: Dict[str, str], runs: int) -> List[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--real", action="store_true", help="this machine, not the lab")
    args = parser.parse_args()
    gpudoctor = shutil.which("gpudoctor") or os.path.join(os.path.dirname(sys.executable), "gpudoctor")
    with tempfile.TemporaryDirectory() as workdir:
        env = dict(os.environ) if args.real else lab_environment(workdir)
        rows = {"gpus": ["gpus"], "gpus --json": ["gpus", "--json"], "gpus --pick 2": ["gpus", "--pick", "2"]}
        print(f"{'command':24} {'median s':>9} {'min s':>7} {'max s':>7}  "
              f"(runs={args.runs}, cores={os.cpu_count()}, {'this machine' if args.real else 'lab: 4 GPUs'})")
        for label, argv in rows.items():
            t = wall_times([gpudoctor, *argv], env, args.runs)
            print(f"{label:24} {statistics.median(t):9.3f} {min(t):7.3f} {max(t):7.3f}")


if __name__ == "__main__":
    main()
