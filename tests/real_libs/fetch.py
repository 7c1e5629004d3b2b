#!/usr/bin/env python3
"""Fetch real NVIDIA libraries for the tests into a cache folder (stdlib only).

DESIGN.md, "Testing without a GPU": NVIDIA's own user-space driver libraries (Debian non-free:
535 and the 470 Tesla branch), an old CUDA runtime and cuBLAS (Debian's CUDA 11.8 packages),
and the CUDA 12 runtime wheel from PyPI. Nothing is installed system-wide:

- Debian packages: `apt-get download` with a PRIVATE apt configuration derived from this
  machine's own sources (its Debian entries, with the `non-free` component added), private
  lists and cache folders, then `dpkg -x` into the cache. No mirror is named here: the
  machine's own sources list says where the packages come from.
- Wheels: `pip download --no-deps` of pinned versions, and only their `nvidia/*/lib` files and
  dist-info METADATA are unzipped, into a folder laid out like a site-packages.

Usage: python tests/real_libs/fetch.py [--cache DIR] [--skip-apt] [--skip-pip]
The cache (default tests/.cache/real_libs, gitignored) gets a manifest.json naming what is
there; a second run reuses what is already fetched. Exit 0 even when a source is unreachable
(the manifest lists what is missing and why, and the tests that need it skip).
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CACHE = os.path.join(os.path.dirname(HERE), ".cache", "real_libs")
CACHE_ENV = "GPUDOCTOR_REAL_LIBS_CACHE"

# package -> what the tests use it for. Sizes (bookworm, 2026): libcublas11 is the big one
# (44 MB download, 92 MB unpacked); its libcublasLt11 (206 MB) is deliberately NOT fetched, which
# makes a real "libcublas.so.11 installed but its libcublasLt.so.11 is missing" case.
DEBIAN_PACKAGES = {
    "libcuda1": "driver-535",  # libcuda.so.535.x, CUDA 12.2 driver API
    "libnvidia-ml1": "nvml-535",
    "libnvidia-tesla-470-cuda1": "driver-470",  # libcuda.so.470.x, CUDA 11.4
    "libnvidia-tesla-470-ml1": "nvml-470",
    "libcudart11.0": "cudart-11",  # libcudart.so.11.0 -> libcudart.so.11.8.89
    "libcublas11": "cublas-11",  # libcublas.so.11 (needs libcublasLt.so.11, absent on purpose)
}

# Pinned so the tests' expected versions do not drift. Small wheels only.
WHEELS = {
    "nvidia-cuda-runtime-cu12": "12.9.79",  # 3.5 MB: libcudart.so.12
}


def log(msg):
    sys.stderr.write("real_libs: " + msg + "\n")
    sys.stderr.flush()


def load_manifest(cache):
    try:
        with open(os.path.join(cache, "manifest.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"debs": {}, "wheels": {}, "missing": {}}


def save_manifest(cache, manifest):
    tmp = os.path.join(cache, "manifest.json.tmp")
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(cache, "manifest.json"))


# -- private apt configuration -------------------------------------------------------------------

def _codename():
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("VERSION_CODENAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def _with_non_free_deb822(text, codename):
    """Keep the Debian stanzas of a .sources file (suites of this release), add non-free."""
    out = []
    for stanza in re.split(r"\n\s*\n", text):
        fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M))
        suites = fields.get("Suites", "").split()
        if fields.get("Enabled", "yes").lower() == "no" or "main" not in fields.get("Components", "").split():
            continue
        if codename and not any(s.split("-")[0] == codename for s in suites):
            continue
        if "non-free" not in fields["Components"].split():
            stanza = re.sub(r"^(Components:.*)$", r"\1 non-free", stanza, flags=re.M)
        out.append(stanza.strip())
    return "\n\n".join(out) + "\n" if out else ""


def _with_non_free_list(text, codename):
    """One-line format: keep `deb URI SUITE main ...` lines of this release, add non-free."""
    out = []
    for line in text.splitlines():
        words = line.split()
        if len(words) < 4 or words[0] != "deb" or "main" not in words[3:]:
            continue
        suite = [w for w in words[1:] if not w.startswith("[")][1]
        if codename and suite.split("-")[0] != codename:
            continue
        if "non-free" not in words:
            line = line.rstrip() + " non-free"
        out.append(line)
    return "\n".join(out) + "\n" if out else ""


def write_private_sources(apt_dir):
    """Copy /etc/apt/sources.list* into apt_dir/etc with non-free added; True if any entry."""
    codename = _codename()
    etc = os.path.join(apt_dir, "etc")
    parts = os.path.join(etc, "sources.list.d")
    shutil.rmtree(etc, ignore_errors=True)
    os.makedirs(parts)
    found = False
    sources = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*"))
    for path in sources:
        if path.endswith(".sources"):
            convert, dest = _with_non_free_deb822, os.path.join(parts, os.path.basename(path))
        elif path.endswith(".list"):
            convert = _with_non_free_list
            dest = os.path.join(etc, "sources.list") if path == "/etc/apt/sources.list" else \
                os.path.join(parts, os.path.basename(path))
        else:
            continue  # .disabled, .save, ...: apt ignores them too
        try:
            with open(path) as f:
                text = convert(f.read(), codename)
        except OSError:
            continue
        if text:
            found = True
            with open(dest, "w") as f:
                f.write(text)
    open(os.path.join(etc, "sources.list"), "a").close()
    return found


def apt_options(apt_dir):
    for sub in ("lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(apt_dir, sub), exist_ok=True)
    opts = ["-o", "Dir::Etc::sourcelist=" + os.path.join(apt_dir, "etc", "sources.list"),
            "-o", "Dir::Etc::sourceparts=" + os.path.join(apt_dir, "etc", "sources.list.d"),
            "-o", "Dir::State::Lists=" + os.path.join(apt_dir, "lists"),
            "-o", "Dir::Cache=" + os.path.join(apt_dir, "cache"),
            "-o", "Debug::NoLocking=1"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        opts += ["-o", "APT::Sandbox::User=root"]  # the _apt user cannot write our private folders
    return opts


def _run(cmd, cwd=None, timeout=600):
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=timeout)
    return proc.returncode, proc.stdout


def fetch_debs(cache, manifest):
    wanted = [p for p in DEBIAN_PACKAGES if p not in manifest["debs"]]
    if not wanted:
        return
    if not (shutil.which("apt-get") and shutil.which("dpkg")):
        for p in wanted:
            manifest["missing"][p] = "apt-get/dpkg not available on this machine"
        return
    apt_dir = os.path.join(cache, "apt")
    if not write_private_sources(apt_dir):
        for p in wanted:
            manifest["missing"][p] = "no Debian entry in /etc/apt/sources.list*"
        return
    opts = apt_options(apt_dir)
    rc, out = _run(["apt-get"] + opts + ["-q", "update"])
    if rc != 0:
        log("private apt-get update failed:\n" + out[-2000:])
    debs = tempfile.mkdtemp(prefix="debs-", dir=cache)
    try:
        for pkg in wanted:
            rc, out = _run(["apt-get"] + opts + ["-q", "download", pkg], cwd=debs)
            files = glob.glob(os.path.join(debs, pkg + "_*.deb"))
            if rc != 0 or not files:
                manifest["missing"][pkg] = "apt-get download failed: " + out.strip()[-300:]
                continue
            root = os.path.join(cache, "deb", pkg)
            shutil.rmtree(root, ignore_errors=True)
            os.makedirs(root)
            rc, out = _run(["dpkg", "-x", files[0], root])
            if rc != 0:
                manifest["missing"][pkg] = "dpkg -x failed: " + out.strip()[-300:]
                continue
            version = os.path.basename(files[0])[len(pkg) + 1:].rsplit("_", 1)[0]
            manifest["debs"][pkg] = {"version": version.replace("%3a", ":"), "root": os.path.join("deb", pkg),
                                     "role": DEBIAN_PACKAGES[pkg]}
            manifest["missing"].pop(pkg, None)
            log("unpacked %s %s" % (pkg, version))
    finally:
        shutil.rmtree(debs, ignore_errors=True)


# -- wheels ----------------------------------------------------------------------------------------

def _keep_member(name):
    return bool(re.match(r"nvidia/[^/]+/lib/[^/]+$", name)) or name.endswith(".dist-info/METADATA")


def fetch_wheels(cache, manifest, python):
    site = os.path.join(cache, "site-packages")
    for dist, version in WHEELS.items():
        if manifest["wheels"].get(dist, {}).get("version") == version:
            continue
        tmp = tempfile.mkdtemp(prefix="wheel-", dir=cache)
        try:
            rc, out = _run([python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                            "--disable-pip-version-check", "-q", "-d", tmp, "%s==%s" % (dist, version)])
            wheels = glob.glob(os.path.join(tmp, "*.whl"))
            if rc != 0 or not wheels:
                manifest["missing"][dist] = "pip download failed: " + out.strip()[-300:]
                continue
            with zipfile.ZipFile(wheels[0]) as zf:
                for member in zf.namelist():
                    if _keep_member(member):
                        zf.extract(member, site)
            manifest["wheels"][dist] = {"version": version, "site_packages": "site-packages"}
            manifest["missing"].pop(dist, None)
            log("unpacked %s %s" % (dist, version))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def ensure(cache=None, apt=True, pip=True, python=None):
    """Fill the cache (idempotent) and return the manifest, with `cache` set to the folder."""
    cache = os.path.abspath(cache or os.environ.get(CACHE_ENV) or DEFAULT_CACHE)
    os.makedirs(cache, exist_ok=True)
    manifest = load_manifest(cache)
    for key in ("debs", "wheels", "missing"):
        manifest.setdefault(key, {})
    started = time.time()
    if apt:
        fetch_debs(cache, manifest)
    if pip:
        fetch_wheels(cache, manifest, python or sys.executable)
    save_manifest(cache, manifest)
    manifest["cache"] = cache
    manifest["seconds"] = round(time.time() - started, 1)
    return manifest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", help="cache folder (default: $%s or %s)" % (CACHE_ENV, DEFAULT_CACHE))
    parser.add_argument("--skip-apt", action="store_true")
    parser.add_argument("--skip-pip", action="store_true")
    args = parser.parse_args(argv)
    manifest = ensure(args.cache, apt=not args.skip_apt, pip=not args.skip_pip)
    log("cache %s: %d Debian packages, %d wheels, %d missing, %.1f s"
        % (manifest["cache"], len(manifest["debs"]), len(manifest["wheels"]), len(manifest["missing"]),
           manifest["seconds"]))
    for name, why in sorted(manifest["missing"].items()):
        log("missing %s: %s" % (name, why))
    return 0


if __name__ == "__main__":
    sys.exit(main())
