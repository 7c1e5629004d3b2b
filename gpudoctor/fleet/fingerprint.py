"""A node's stack fingerprint: the facts that make two nodes "the same machine" for a framework.

It is a subset of `gpudoctor diff`'s aspects (so a difference in the fingerprint is ranked exactly
as `diff` ranks it): driver and CUDA driver version, GPU models and count, the CUDA libraries dlopen
loads and their versions, the framework builds, the Linux kernel, and whether it runs in a
container. Paths, environment variables and pip packages are left out: they differ between nodes
that work alike (home directories, job ids), and would split every fleet into groups of one.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Dict, Mapping, Optional, Tuple

from ..diff.compare import Aspect, aspects_of

_FINGERPRINT_KEY = re.compile(
    r"^(driver\.(version|nvml_version|cuda_version)"
    r"|gpus\.(count|\d+\.name)"
    r"|lib\.[^.].*\.version"
    r"|fw\.[^.]+\.(version|build|cuda_version|cudnn_version)"
    r"|system\.(kernel_release|in_container))$")

# The fact subtrees the fingerprint reads; a group keeps only these of its first report, so that
# `diff`'s ranking can run on it later without holding whole reports.
_STACK_FACTS = ("driver", "gpus", "libraries", "frameworks", "system")
_BULKY_FRAMEWORK_FACTS = ("packages", "distributions", "conda_packages", "pins")
_PER_NODE_SYSTEM_FACTS = ("hostname",)  # differs on every node, and no aspect reads it


def is_fingerprint_key(key: str) -> bool:
    return bool(_FINGERPRINT_KEY.match(key))


def fingerprint_of(stack: Mapping[str, Any]) -> Tuple[str, Dict[str, Aspect]]:
    """(short id, the fingerprint's aspects by key) of a `stack_report`. Equal ids: equal stacks."""
    aspects = {k: a for k, a in aspects_of(stack).items() if is_fingerprint_key(k) and a.value is not None}
    canonical = json.dumps(sorted((k, a.value) for k, a in aspects.items()), separators=(",", ":"))
    return hashlib.sha1(canonical.encode("utf-8")).hexdigest()[:10], aspects


class FingerprintCache:
    """Nodes of one fleet mostly share a stack: flattening a stack into aspects costs twice as much
    as serialising it, so the fingerprint is computed once per distinct stack (keyed by a digest
    of its facts, so memory stays a few dozen bytes per distinct stack)."""

    def __init__(self) -> None:
        self._known: Dict[bytes, Tuple[str, Dict[str, Aspect]]] = {}

    def fingerprint(self, stack: Mapping[str, Any]) -> Tuple[str, Dict[str, Aspect]]:
        digest = hashlib.sha1(json.dumps(stack.get("facts"), default=str).encode("utf-8")).digest()
        known = self._known.get(digest)
        if known is None:
            known = self._known[digest] = fingerprint_of(stack)
        return known


def stack_report(report: Mapping[str, Any]) -> Dict[str, Any]:
    """The part of a report the fingerprint and the ranking read (verdict, findings, stack facts)."""
    facts: Mapping[str, Any] = report.get("facts") or {}
    stack: Dict[str, Any] = {name: facts.get(name) for name in _STACK_FACTS if name in facts}
    frameworks: Optional[Mapping[str, Any]] = stack.get("frameworks") if isinstance(stack.get("frameworks"),
                                                                                     Mapping) else None
    if frameworks is not None:
        stack["frameworks"] = {k: v for k, v in frameworks.items() if k not in _BULKY_FRAMEWORK_FACTS}
    if isinstance(stack.get("system"), Mapping):
        stack["system"] = {k: v for k, v in stack["system"].items() if k not in _PER_NODE_SYSTEM_FACTS}
    findings = [{k: f.get(k) for k in ("code", "severity", "layer", "title", "caused_by")}
                for f in report.get("findings") or [] if isinstance(f, Mapping)]
    return {"verdict": report.get("verdict"), "findings": findings, "facts": stack}
