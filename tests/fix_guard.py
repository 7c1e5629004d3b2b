"""Every finding any rule produces anywhere in the test suite names packages that exist.

A pytest plugin (registered in tests/conftest.py): for the whole session, every finding that
`diagnose` records (Prior.add) has the package names of its fix checked against gpudoctor/fixes'
lists, so the hundreds of machines the rule tests build are all fix-validity scenarios too. Names
only: those machines' installed versions may be made up (tests/test_every_fix.py checks the pinned
versions on machines whose versions are real). `RULE_CODES_SEEN` records what was checked.
"""

from __future__ import annotations

from typing import Set

import pytest

from gpudoctor.fixes import check_command
from gpudoctor.rules.base import Prior

CODES_SEEN: Set[str] = set()


@pytest.fixture(scope="session", autouse=True)
def every_rule_fix_is_checked():
    original = Prior.add

    def add(self, finding):
        problems = [p for step in finding.fix for p in check_command(step, versions=False)]
        assert not problems, f"{finding.code}: a fix names a package that does not exist: {problems}"
        CODES_SEEN.add(finding.code)
        original(self, finding)

    Prior.add = add
    yield
    Prior.add = original
