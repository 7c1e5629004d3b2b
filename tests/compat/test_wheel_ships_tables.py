"""The wheel a user installs carries the compat tables (force-included as gpudoctor/compat_data)."""

import glob
import os
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_built_wheel_contains_every_table(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), ROOT],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = glob.glob(str(tmp_path / "gpudoctor-*.whl"))[0]
    shipped = {os.path.basename(n) for n in zipfile.ZipFile(wheel).namelist() if "/compat_data/" in n}
    tables = {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "compat", "*.toml"))}
    assert tables and tables <= shipped
