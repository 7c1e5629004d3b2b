"""`fleet reports`: saved `check --json` files (or `gpudoctor report` files), from any launcher.

A node is named by its file name without the extension (`node17.json` -> `node17`), which is how
the docs' pdsh, Ansible and Kubernetes recipes save them. Files are read one at a time.
"""

from __future__ import annotations

import os
from typing import Iterator, List, Sequence

from ..saved_report import SavedReportError, load_saved_report
from .aggregate import NodeAnswer

REPORT_SUFFIXES = (".json", ".md")


def report_files(paths: Sequence[str]) -> Iterator[str]:
    """The files named, and the *.json files in the folders named (sorted, not recursive; a
    `gpudoctor report` Markdown file is read when named, a folder's other files are left alone)."""
    for path in paths:
        if os.path.isdir(path):
            names = sorted(e.name for e in os.scandir(path) if e.name.endswith(".json") and e.is_file())
            for name in names:
                yield os.path.join(path, name)
        else:  # a file (one that vanished since check_paths is that node's read error)
            yield path


def check_paths(paths: Sequence[str]) -> List[str]:
    """The paths that do not exist (checked before any file is read, so a typo is a usage error)."""
    return [p for p in paths if not os.path.exists(p)]


def node_name(path: str) -> str:
    base = os.path.basename(path)
    for suffix in REPORT_SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def read_reports(paths: Sequence[str]) -> Iterator[NodeAnswer]:
    for path in report_files(paths):
        try:
            yield NodeAnswer(node_name(path), load_saved_report(path))
        except SavedReportError as exc:
            yield NodeAnswer(node_name(path), error=str(exc))
