"""Parse the log lines frameworks print about GPU trouble (TensorFlow's C++ logging, JAX warnings).

TensorFlow says why it cannot use the GPU only in its log, e.g.
  2023-03-01 10:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:64]
      Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared
      object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda/lib64
  W0000 00:00:1727371234.567890   12345 cuda_executor.cc:1040] failed call to cuInit: ...
The first prefix is TensorFlow's own logger (before 2.16), the second absl's (2.16 and later).
Used by the live probe and, on a pasted log, by `gpudoctor explain`.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple

from ...facts.frameworks import FrameworkLogLine

_TF_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d [\d:.]+: ([IWEF]) (\S+?:\d+)\] ?(.*)$")
_ABSL_PREFIX = re.compile(r"^([IWEF])\d{4} [\d:.]+\s+\d+ (\S+?:\d+)\] ?(.*)$")

Extract = Callable[["re.Match[str]"], Dict[str, Optional[str]]]

# (kind, pattern searched in the message, what to keep from the match)
_PATTERNS: List[Tuple[str, "re.Pattern[str]", Extract]] = [
    ("dlopen-failed",
     re.compile(r"Could not load dynamic library '([^']+)'; dlerror: (.*?)(?:; LD_LIBRARY_PATH: .*)?$"),
     lambda m: {"library": m.group(1), "error": m.group(2)}),
    ("cannot-dlopen-gpu-libs", re.compile(r"Cannot dlopen some GPU libraries"), lambda m: {}),
    ("no-cuda-drivers", re.compile(r"Could not find cuda drivers on your machine"), lambda m: {}),
    ("cuinit-failed", re.compile(r"failed call to cuInit: (.*)$"), lambda m: {"error": m.group(1)}),
    ("kernel-driver-not-running", re.compile(r"kernel driver does not appear to be running on this host"),
     lambda m: {}),
    ("cudnn-version-mismatch",
     re.compile(r"Loaded runtime CuDNN library: (\d+(?:\.\d+)*) but source was compiled with: (\d+(?:\.\d+)*)"),
     lambda m: {"runtime_version": m.group(1), "compiled_version": m.group(2)}),
    ("gpu-created", re.compile(r"Created device .*?device:GPU:\d+ with"), lambda m: {}),
    ("tensorrt-missing", re.compile(r"TF-TRT Warning: Could not find TensorRT"), lambda m: {}),
    ("jax-no-cuda-jaxlib",
     re.compile(r"An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed"),
     lambda m: {}),
    ("driver-insufficient", re.compile(r"CUDA driver version is insufficient for CUDA runtime version"),
     lambda m: {}),
]

MAX_LINES = 60


def parse_framework_log(text: str) -> List[FrameworkLogLine]:
    """Recognised lines, and other warnings/errors from TensorFlow's logger, in order."""
    out: List[FrameworkLogLine] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        level = source = None
        message = line
        prefix = _TF_PREFIX.match(line) or _ABSL_PREFIX.match(line)
        if prefix:
            level, source, message = prefix.group(1), prefix.group(2), prefix.group(3)
        parsed = _classify(message, level, source)
        if parsed is None and level in ("E", "F"):
            parsed = FrameworkLogLine(kind="other", text=message, level=level, source=source)
        if parsed is not None and not any(p.kind == parsed.kind and p.text == parsed.text for p in out):
            out.append(parsed)  # TensorFlow repeats some lines once per initialisation
        if len(out) >= MAX_LINES:
            break
    return out


def _classify(message: str, level: Optional[str], source: Optional[str]) -> Optional[FrameworkLogLine]:
    for kind, pattern, extract in _PATTERNS:
        match = pattern.search(message)
        if match:
            return FrameworkLogLine(kind=kind, text=message, level=level, source=source, **extract(match))
    return None


def missing_libraries(lines: List[FrameworkLogLine]) -> List[str]:
    """Sonames the framework failed to dlopen, once each, in order."""
    seen: List[str] = []
    for line in lines:
        if line.kind == "dlopen-failed" and line.library and line.library not in seen:
            seen.append(line.library)
    return seen
