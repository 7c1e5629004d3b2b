"""The rule registry: every rule, bottom layer first (the order is how root causes are found)."""

from __future__ import annotations

from typing import List, Optional

from ..facts import Facts
from ..model import Finding
from . import companions, containers, torch_libraries
from . import (compatibility, framework_builds, framework_libraries, frameworks, hardware, kernel_driver, libraries,
               runtime_test, userspace_driver, visibility)
from . import memory, toolchain
from . import platform_limits, table_coverage
from .base import Prior, Rule

RULES: List[Rule] = [
    *platform_limits.RULES,
    *hardware.RULES,
    *containers.RULES,
    *kernel_driver.RULES,
    *userspace_driver.RULES,
    *visibility.RULES,
    *libraries.RULES,
    *toolchain.RULES,
    *framework_libraries.RULES,
    *torch_libraries.RULES,
    *framework_builds.RULES,
    *frameworks.RULES,
    *companions.RULES,
    *compatibility.RULES,
    *memory.RULES,
    *table_coverage.RULES,
    *runtime_test.RULES,
]


def diagnose(facts: Facts, rules: Optional[List[Rule]] = None) -> List[Finding]:
    prior = Prior()
    findings: List[Finding] = []
    for rule in rules if rules is not None else RULES:
        for finding in rule(facts, prior):
            if not platform_limits.examined(facts, finding):
                continue  # never a cause either: later rules must not point caused_by at it
            findings.append(finding)
            prior.add(finding)
    return findings
