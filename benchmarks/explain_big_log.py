"""Generate a 1 GB training log in a temp dir, run `gpudoctor explain` on it, print peak RSS and time.

    python benchmarks/explain_big_log.py [--size-mb 1024]

The log is mostly ordinary training output (TensorFlow/PyTorch-style lines, progress bars
redrawn with \\r, ANSI colours) with real error lines sprinkled through it, so the keyword
pre-filter has work to do. Peak RSS comes from resource.getrusage of a child process that
runs only the explain command.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOISE = [
    b"2024-05-10 11:33:%02d.068255: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1928] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 22259 MB memory\n",
    b"Epoch %d/100 - loss: 0.4312 - accuracy: 0.8731 - val_loss: 0.5120 - val_accuracy: 0.8450\n",
    b"\x1b[32m[train]\x1b[0m step %d  lr=3.0e-04  grad_norm=1.27  tokens/s=51234\n",
    b" 45%%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88     | %d/9565 [00:19<50:33, 19.03s/it]\r",
    b"INFO:root:checkpoint %d saved to /data/run/ckpt.pt\n",
]
ERRORS = [
    b"W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory\n",
    b"RuntimeError: CUDA error: invalid device ordinal\n",
]


def generate(path: Path, size: int) -> None:
    block = bytearray()
    i = 0
    while len(block) < (1 << 20):
        block += NOISE[i % len(NOISE)] % (i % 60,) if b"%02d" in NOISE[i % len(NOISE)] else NOISE[i % len(NOISE)] % (i,)
        i += 1
    written = 0
    with open(path, "wb") as fh:
        n = 0
        while written < size:
            fh.write(block)
            written += len(block)
            n += 1
            if n % 97 == 0:
                fh.write(ERRORS[(n // 97) % len(ERRORS)])


def grep_baseline(log: Path, mode: str) -> str:
    """The same keywords through grep alone: -F as a list of literals, -E as one alternation (the
    comparison issue 9 asks for)."""
    sys.path.insert(0, str(ROOT))
    from gpudoctor.explain.catalogue import load_catalogue
    keywords = list(load_catalogue().by_keyword)
    if mode == "-E":
        args = ["grep", "-a", "-E", "-i", "-c", "-e", "|".join(re.escape(k) for k in keywords)]
    else:
        args = ["grep", "-a", "-F", "-i", "-c"] + [a for k in keywords for a in ("-e", k)]
    t0 = time.perf_counter()
    done = subprocess.run(args + [str(log)], capture_output=True, env={**os.environ, "LC_ALL": "C"})
    wall = time.perf_counter() - t0
    return (f"grep {mode} -i -c with the same {len(keywords)} keywords: {wall:.1f} s wall, "
            f"{log.stat().st_size / (1 << 20) / wall:.0f} MiB/s ({done.stdout.decode().strip()} lines)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1024)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "big.log"
        t0 = time.perf_counter()
        generate(log, args.size_mb << 20)
        print(f"generated {log.stat().st_size / (1 << 20):.0f} MiB in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "gpudoctor.commands.explain", "explain", "--json", str(log)],
                              cwd=ROOT, capture_output=True)
        wall = time.perf_counter() - t0
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak_mib = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / (1 << 20)
        print(f"explain: exit {proc.returncode}, {wall:.1f} s wall, {usage.ru_utime + usage.ru_stime:.1f} s CPU, "
              f"peak RSS {peak_mib:.1f} MiB, {log.stat().st_size / (1 << 20) / wall:.0f} MiB/s")
        print(grep_baseline(log, "-E"))
        print(grep_baseline(log, "-F"))
        if proc.returncode not in (0, 1):
            print(proc.stderr.decode(errors="replace"))
            return 1
        import json
        report = json.loads(proc.stdout)
        print("findings:", [(f["code"], f["evidence"].get("count")) for f in report["findings"]])
        print("lines:", report["source"]["lines"], "candidate lines:", report["source"]["candidate_lines"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
