"""List the target interpreter's distributions from their metadata, importing nothing.

Runs on the TARGET interpreter (check --python), so it is stdlib-only and Python 3.6-compatible.
Walks sys.path for *.dist-info / *.egg-info the way importlib.metadata does, but reads only the
metadata headers (not the long description): a big env has hundreds of distributions and this
runs in `check --quick`.
"""

import io
import os
import platform
import sys

from _gpudoctor_child import emit, open_channel

# Distributions whose details (location, installer, requirements) matter to the rules.
DETAIL_PREFIXES = ("torch", "pytorch", "tensorflow", "tf-nightly", "tf-", "keras", "jax", "cupy", "nvidia-",
                   "triton", "pytorch-triton", "tensorrt", "intel-extension-for", "xformers",
                   # packages with CUDA extension modules built against one torch and CUDA (rules/companions.py)
                   "flash-attn", "mamba-ssm", "causal-conv1d", "vllm", "apex", "detectron2", "mmcv", "bitsandbytes",
                   "auto-gptq", "exllamav2", "flashinfer", "spconv", "sageattention", "deepspeed", "pyg-lib")
REQUIRES_OF = ("torch", "tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel", "tf-nightly",
               "tensorflow-macos", "jax", "jaxlib", "cupy",
               # companions built for one framework release (rules/companions.py)
               "torchvision", "torchaudio", "torchtext", "torchdata", "xformers", "keras", "tf-keras",
               "jax-cuda11-plugin", "jax-cuda12-plugin", "jax-cuda13-plugin", "jax-cuda12-pjrt", "jax-cuda13-pjrt")
FRAMEWORK_PACKAGES = ("torch", "tensorflow", "jax", "jaxlib", "cupy", "jax_plugins")
CONDA_PREFIXES = ("cudatoolkit", "cuda-", "cudnn", "libcudnn", "nccl", "libnccl", "libcublas", "libcufft",
                  "libcurand", "libcusolver", "libcusparse", "libnvjitlink", "pytorch", "tensorflow", "jax",
                  "jaxlib", "cupy", "libtorch")


def normalize(name):
    out, prev = [], False
    for ch in name.lower():
        if ch in "-_.":
            if not prev:
                out.append("-")
            prev = True
        else:
            out.append(ch)
            prev = False
    return "".join(out)


def read_headers(path):
    """The RFC 822 headers of a METADATA/PKG-INFO file, up to the first blank line."""
    headers = []
    try:
        with io.open(path, "r", encoding="utf-8", errors="replace") as fh:  # io.open: Python 2.7 targets too
            for line in fh:
                line = line.rstrip("\r\n")
                if not line:
                    break
                if line[:1] in (" ", "\t") and headers:
                    headers[-1] = (headers[-1][0], headers[-1][1] + " " + line.strip())
                elif ":" in line:
                    key, _, value = line.partition(":")
                    headers.append((key.strip(), value.strip()))
    except (OSError, IOError):
        return None
    return headers


def read_text(path):
    try:
        with io.open(path, "r", encoding="utf-8", errors="replace") as fh:  # io.open: Python 2.7 targets too
            return fh.read().strip()
    except (OSError, IOError):
        return None


def metadata_path(entry_dir, entry):
    full = os.path.join(entry_dir, entry)
    if entry.endswith(".dist-info"):
        return os.path.join(full, "METADATA")
    if os.path.isdir(full):
        return os.path.join(full, "PKG-INFO")
    return full  # a single-file *.egg-info


def scan(paths):
    distributions = []
    for entry_dir in paths:
        try:
            entries = sorted(os.listdir(entry_dir))
        except (OSError, IOError):
            continue
        for entry in entries:
            if not (entry.endswith(".dist-info") or entry.endswith(".egg-info")):
                continue
            headers = read_headers(metadata_path(entry_dir, entry))
            if not headers:
                continue
            fields = {}
            requires = []
            for key, value in headers:
                lowered = key.lower()
                if lowered == "requires-dist":
                    requires.append(value)
                elif lowered not in fields:
                    fields[lowered] = value
            name = fields.get("name")
            if not name:
                continue
            record = {"name": name, "version": fields.get("version", ""), "location": entry_dir}
            key = normalize(name)
            if key.startswith(DETAIL_PREFIXES):
                record["detail"] = True
                record["metadata_dir"] = entry
                if entry.endswith(".dist-info"):
                    record["installer"] = read_text(os.path.join(entry_dir, entry, "INSTALLER"))
                if key in REQUIRES_OF:
                    record["requires"] = requires
            distributions.append(record)
    return distributions


def framework_dirs(paths):
    """The folder `import NAME` would pick: the first sys.path entry that has the package."""
    found = {}
    for name in FRAMEWORK_PACKAGES:
        for entry_dir in paths:
            candidate = os.path.join(entry_dir, name)
            if os.path.isfile(os.path.join(candidate, "__init__.py")) or \
                    (name == "jax_plugins" and os.path.isdir(candidate)):
                found[name] = candidate
                break
    return found


def conda_packages(prefix):
    meta = os.path.join(prefix, "conda-meta")
    try:
        names = os.listdir(meta)
    except (OSError, IOError):
        return None
    packages = []
    for file_name in sorted(names):
        if not file_name.endswith(".json") or not file_name.startswith(CONDA_PREFIXES):
            continue
        parts = file_name[:-len(".json")].rsplit("-", 2)  # conda names these NAME-VERSION-BUILD.json
        if len(parts) == 3:
            packages.append({"name": parts[0], "version": parts[1], "build": parts[2]})
    return packages


def marker_environment():
    """PEP 508 marker variables of this interpreter (what packaging.markers would compute)."""
    implementation = getattr(sys, "implementation", None)  # absent on Python 2.7 (PEP 508: "" / "0")
    info = implementation.version if implementation else None
    impl_version = "%d.%d.%d" % (info.major, info.minor, info.micro) if info else "0"
    if info and info.releaselevel != "final":
        impl_version += info.releaselevel[0] + str(info.serial)
    return {
        "implementation_name": implementation.name if implementation else "",
        "implementation_version": impl_version,
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    }


def main():
    open_channel()
    script_dir = os.path.dirname(os.path.abspath(__file__))
    paths = [p for p in sys.path if p and os.path.abspath(p) != script_dir]
    emit("python", {"executable": sys.executable, "version": platform.python_version(),
                    "prefix": sys.prefix, "path": paths})
    emit("marker_environment", marker_environment())
    emit("framework_dirs", framework_dirs(paths))
    emit("distributions", scan(paths))
    if os.path.isdir(os.path.join(sys.prefix, "conda-meta")):
        emit("conda", {"prefix": sys.prefix, "packages": conda_packages(sys.prefix)})


if __name__ == "__main__":
    main()
