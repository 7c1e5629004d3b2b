"""Pure helpers over the framework facts, shared by the rule modules that judge frameworks
(framework_libraries, framework_builds, frameworks), as situation.py is for the lower layers."""

from __future__ import annotations

from typing import List

from ..facts import Facts
from ..facts.frameworks import FrameworkFacts


def installed_frameworks(facts: Facts) -> List[FrameworkFacts]:
    return [fw for fw in facts.frameworks.frameworks.values() if fw.static.installed and fw.static.version]


def cuda_builds(facts: Facts) -> List[FrameworkFacts]:
    return [fw for fw in installed_frameworks(facts) if fw.static.build == "cuda"]


def label(fw: FrameworkFacts) -> str:
    """"PyTorch 2.5.1+cu124": the version the framework reports when it ran, else its files'."""
    version = (fw.live.version if fw.live and fw.live.version else None) or fw.static.version
    return "%s %s" % (fw.display_name, version) if version else fw.display_name
