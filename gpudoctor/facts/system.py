"""The machine and the interpreter being examined."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class SystemFacts:
    os: str = ""  # platform.system(): Linux, Windows, Darwin
    kernel_release: str = ""
    machine: str = ""  # x86_64, aarch64
    distro: Optional[str] = None  # PRETTY_NAME from /etc/os-release
    hostname: str = ""
    python_executable: str = ""  # the target interpreter
    python_version: Optional[str] = None  # of the target interpreter
    gpudoctor_python: str = ""  # the interpreter gpudoctor itself runs in
    in_container: bool = False
    container_evidence: List[str] = field(default_factory=list)  # /.dockerenv, cgroup lines, ...
    wsl: bool = False
    conda_prefix: Optional[str] = None  # the target env's prefix when it is a conda env
    virtual_env: Optional[str] = None
    env_kind: str = "system"  # conda | venv | system: decides pip vs conda fixes


@dataclass
class EnvironmentFacts:
    """Only allowlisted variables are ever collected (privacy, DESIGN.md)."""

    variables: Dict[str, str] = field(default_factory=dict)
    misspelled: List["MisspelledVariable"] = field(default_factory=list)


@dataclass
class MisspelledVariable:
    name: str  # as set, e.g. CUDA_VISIBLE_DIVICES
    meant: str  # CUDA_VISIBLE_DEVICES
    value: str
