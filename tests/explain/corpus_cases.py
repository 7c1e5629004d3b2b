"""Read a corpus of real logs: `manifest.toml` in the corpus folder and in each of its
subfolders (one per class of failure), every case with the absolute `path` of its log."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def load_cases(root: Path) -> List[Dict[str, Any]]:
    cases: List[Dict[str, Any]] = []
    for manifest in [root / "manifest.toml", *sorted(root.glob("*/manifest.toml"))]:
        if not manifest.is_file():
            continue
        for case in tomllib.loads(manifest.read_text(encoding="utf-8")).get("case", []):
            path = manifest.parent / case["file"]
            cases.append({**case, "path": path, "id": str(path.relative_to(root))})
    return cases
