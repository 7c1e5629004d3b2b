"""One GPU process as people read it: pid, user, memory, command line."""

from __future__ import annotations

from typing import Optional

from ..facts.driver import GpuProcess
from ..units import mib

NOT_VISIBLE = "(not visible)"


def shorten(text: str, width: Optional[int]) -> str:
    """Keep the start (the program and first arguments say what the job is)."""
    if width is None or len(text) <= width:
        return text
    return text[: max(1, width - 1)] + "…"


def command_of(process: GpuProcess) -> str:
    """The command line, else NVML's name; a pid this namespace cannot see says so."""
    if process.visible is False:
        return f"{NOT_VISIBLE} {process.name}" if process.name else NOT_VISIBLE
    return process.command or process.name or "?"


def holder_text(process: GpuProcess, command_width: Optional[int] = None) -> str:
    """`4242 alice 11000 MiB python train.py`: the user is left out where it is unknown."""
    parts = [str(process.pid)]
    if process.user:
        parts.append(process.user)
    if process.used_memory:
        parts.append(mib(process.used_memory))
    parts.append(shorten(command_of(process), command_width))
    return " ".join(parts)
