"""What every probe needs to know about the machine it looks at."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional


@dataclass(frozen=True)
class ProbeContext:
    sysroot: str = "/"  # GPUDOCTOR_SYSROOT: prefix for reads under /proc, /sys and /dev
    env: Mapping[str, str] = field(default_factory=dict)  # the environment the user's programs see
    python: str = sys.executable  # the target interpreter (check --python)
    timeout: float = 30.0  # per child probe, seconds
    quick: bool = False  # static facts only: no framework import, no GPU op

    @classmethod
    def from_environment(cls, python: Optional[str] = None, timeout: float = 30.0, quick: bool = False,
                         env: Optional[Mapping[str, str]] = None) -> "ProbeContext":
        environ: Dict[str, str] = dict(os.environ if env is None else env)
        return cls(sysroot=environ.get("GPUDOCTOR_SYSROOT") or "/", env=environ,
                   python=python or sys.executable, timeout=timeout, quick=quick)

    def host_path(self, path: str) -> str:
        """Map an absolute /proc, /sys or /dev path into the sysroot."""
        if self.sysroot in ("", "/"):
            return path
        return os.path.join(self.sysroot, path.lstrip("/"))
