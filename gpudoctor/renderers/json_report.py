"""`check --json`: one JSON object, the contract in DESIGN.md."""

from __future__ import annotations

import json
from typing import Any, Dict


def render_json(report_json: Dict[str, Any]) -> str:
    return json.dumps(report_json, indent=2, sort_keys=False, default=str)
