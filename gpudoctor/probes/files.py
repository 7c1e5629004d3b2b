"""Small, never-raising file helpers shared by the static probes."""

from __future__ import annotations

from typing import Optional

MAX_READ_BYTES = 1 << 20  # /proc and /sys files are small; a garbage file must not eat memory


def read_text(path: str, limit: int = MAX_READ_BYTES) -> Optional[str]:
    """The file's text, or None when it is absent or unreadable."""
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return None
