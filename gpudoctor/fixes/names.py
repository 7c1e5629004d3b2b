"""The committed lists of real package names, and a reader of the install commands in fix texts."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ..versions import version_parts

DATA = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def known_pip() -> Dict[str, Dict[str, Any]]:
    with open(DATA / "pip_names.toml", "rb") as fh:
        return tomllib.load(fh)


@lru_cache(maxsize=1)
def known_conda() -> Dict[str, Dict[str, Any]]:
    with open(DATA / "conda_names.toml", "rb") as fh:
        return tomllib.load(fh)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class InstallSpec:
    tool: str  # "pip" | "conda"
    name: str  # normalized, extras dropped
    pin: Optional[str]  # the exact version (or `X.*` prefix) asked for with == (pip) or = (conda)
    text: str  # the spec as written


# `pip install`, `python -m pip install`, `conda install`, `mamba install`; the command runs to the end
# of its backticks, the line, a shell separator or a comment.
_COMMAND = re.compile(r"\b(?P<tool>pip3?|conda|mamba|micromamba)\s+install\s+(?P<args>[^`;&|#\n]*)")
_TAKES_VALUE = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "-i", "--index-url", "--extra-index-url",
                "-f", "--find-links", "-r", "--requirement", "--constraint"}
_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?(?P<rest>.*)$")


def install_specs(text: str) -> List[InstallSpec]:
    """Every package named by an install command in a fix text."""
    out: List[InstallSpec] = []
    for m in _COMMAND.finditer(text):
        tool = "pip" if m.group("tool").startswith("pip") else "conda"
        skip = False
        for raw in m.group("args").split():
            token = raw.strip("\"'`,.()")
            if skip:
                skip = False
                continue
            if not token or token.startswith("-"):
                skip = token in _TAKES_VALUE
                continue
            if "/" in token or token.startswith("<") or token in (".", "..") or token.endswith(":"):
                continue  # a path, a channel/url or a placeholder in prose, not a package
            spec = _SPEC.match(token)
            if spec is None:
                continue
            rest = spec.group("rest")
            pin_m = re.match(r"^(?:==|=)(?!=)([0-9][0-9A-Za-z.*+!-]*)", rest)
            out.append(InstallSpec(tool, normalize(spec.group("name")), pin_m.group(1) if pin_m else None, token))
    return out


def _matches(pin: str, versions: List[str]) -> bool:
    if pin.endswith(".*"):
        prefix = pin[:-2]
        return any(v == prefix or v.startswith(prefix + ".") for v in versions)
    return any(version_parts(v) == version_parts(pin) if version_parts(pin) else v == pin for v in versions) or pin in versions


def check_spec(spec: InstallSpec, with_versions: bool = True) -> Optional[str]:
    """Why a named package would not install as the fix promises, or None. `versions=False` checks the
    name only (for test machines whose installed versions are made up)."""
    table = known_pip() if spec.tool == "pip" else known_conda()
    entry = table.get(spec.name)
    if entry is None:
        return f"{spec.tool} package {spec.name!r} ({spec.text}) is not on the list of real package names"
    versions = list(entry.get("versions") or [])
    pin = spec.pin.split("+")[0] if spec.pin and with_versions else None  # a local version (+cu101): the framework's index
    if pin is None:
        if entry.get("latest_is_placeholder"):
            return f"{spec.name}: its newest release is a placeholder; a fix must pin a real release"
        return None
    if versions:
        return None if _matches(pin, versions) else f"{spec.text}: no release {pin} of {spec.name}"
    latest = version_parts(str(entry.get("latest") or ""))
    wanted = version_parts(pin.rstrip(".*"))
    if latest and wanted and wanted[:len(latest)] > latest:
        return f"{spec.text}: newer than the newest release of {spec.name} ({entry.get('latest')})"
    return None


def check_command(text: str, versions: bool = True) -> List[str]:
    """Problems of every install command in a fix text (empty: every package exists)."""
    return [p for s in install_specs(text) for p in [check_spec(s, with_versions=versions)] if p]
