"""Memory sizes as gpudoctor prints them. Dependency-free: rules, renderers and `gpudoctor gpus`
(which must not pay for importing the rule registry) share it."""

from __future__ import annotations

from typing import Optional

MIB = 1024 * 1024


def mib(value: Optional[int]) -> str:
    return "?" if value is None else f"{value // MIB} MiB"
