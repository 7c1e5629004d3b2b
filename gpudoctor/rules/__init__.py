"""The rule registry: every rule, bottom layer first (the order is how root causes are found)."""

from __future__ import annotations

from typing import List

from ..facts import Facts
from ..model import Finding
from .base import Prior, Rule

RULES: List[Rule] = []


def diagnose(facts: Facts, rules: "List[Rule] | None" = None) -> List[Finding]:
    prior = Prior()
    findings: List[Finding] = []
    for rule in rules if rules is not None else RULES:
        for finding in rule(facts, prior):
            findings.append(finding)
            prior.add(finding)
    return findings

from .frameworks import RULES as _fw  # noqa: E402
RULES.extend(_fw)
