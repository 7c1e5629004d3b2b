"""Memory sizes as gpudoctor prints them. Dependency-free: rules, renderers and `gpudoctor gpus`
(which must not pay for importing the rule registry) share it."""

from __future__ import annotations

from typing import Optional

MIB = 1024 * 1024


def mib(value: Optional[int]) -> str:
    return "?" if value is None else f"{value // MIB} MiB"


_PER_MIB = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024}


def in_mib(number: str, unit: str) -> float:
    """'10.76', 'G' (as logs print '10.76 GiB') -> 11018.24 MiB."""
    return float(number) * _PER_MIB[unit.upper()]
