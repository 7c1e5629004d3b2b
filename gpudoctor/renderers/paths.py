"""Paths a person can read on an 80-column terminal: home as `~`, site-packages without its prefix noise."""

from __future__ import annotations

import os
import re
from typing import Optional

# `lib/python3.10/site-packages` (or Debian's dist-packages) says nothing the reader needs once the
# environment's own folder is shown: it is the same in every env.
_SITE_PACKAGES = re.compile(r"/lib(?:64)?/python\d+(?:\.\d+)?/(site|dist)-packages(?=/|$)")


def home_as_tilde(path: str, home: Optional[str]) -> str:
    """`/home/ana/envs/x` → `~/envs/x` (only a whole path component matches)."""
    home = (home or "").rstrip("/")
    if not home or home == "":
        return path
    if path == home:
        return "~"
    if path.startswith(home + "/"):
        return "~" + path[len(home):]
    return path


def shorten_path(path: str, home: Optional[str] = None) -> str:
    """The short form of a library path for tables: `~` for the home folder, and
    `<env>/lib/pythonX.Y/site-packages/...` as `<env>/…/site-packages/...`. `--wide` shows paths in full."""
    if not path:
        return path
    if home is None:
        home = os.environ.get("HOME")
    short = home_as_tilde(path, home)
    return _SITE_PACKAGES.sub(lambda m: f"/…/{m.group(1)}-packages", short, count=1)
