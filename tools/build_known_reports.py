#!/usr/bin/env python3
"""Write gpudoctor/explain/known_reports.json: the memory explain's last resort searches (similar.py).

Maintainer tool, run after the training corpus changes; a test fails while the file is stale.
The memory is the training corpus only (tests/explain/corpus, every class folder): the hold-out
sets under tests/explain/holdout measure explain and must never be in it.

Each report keeps its confirmed cause (`expected`), its thread (`source`) and the words it shares
with at least MIN_REPORTS reports of the corpus: a word only one report uses is that report's
wording, not its class's vocabulary, and is left out.

    python tools/build_known_reports.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpudoctor.explain.reader import clean_text  # noqa: E402
from gpudoctor.explain.similar import MEMORY, tokens  # noqa: E402
from tests.explain.corpus_cases import load_cases  # noqa: E402

CORPUS = ROOT / "tests" / "explain" / "corpus"
HOLDOUT = ROOT / "tests" / "explain" / "holdout"
MIN_REPORTS = 2


def build() -> Dict[str, Any]:
    held_out = {case["source"] for case in load_cases(HOLDOUT)}
    # A thread that is also in a hold-out set stays out: the hold-out measures the memory too.
    cases = [case for case in load_cases(CORPUS) if case["source"] not in held_out]
    # A healthy label on a log that shows a failure (a known miss: the thread, not the log, says it was
    # harmless) would teach the memory that the failure's words are healthy; such reports stay out.
    cases = [case for case in cases if case["expected"] or not case.get("known_miss")]
    words = {case["id"]: tokens(clean_text(case["path"].read_bytes().decode("utf-8", errors="replace")))
             for case in cases}
    reports_per_word: Counter = Counter()
    for found in words.values():
        reports_per_word.update(found)
    reports: List[Dict[str, Any]] = []
    for case in sorted(cases, key=lambda c: c["id"]):
        kept = sorted(w for w in words[case["id"]] if reports_per_word[w] >= MIN_REPORTS)
        if kept:
            reports.append({"code": case["expected"], "source": case["source"], "words": kept})
    return {
        "about": "Written by tools/build_known_reports.py from tests/explain/corpus; do not edit by hand.",
        "min_reports_per_word": MIN_REPORTS,
        "reports": reports,
    }


def render(data: Dict[str, Any]) -> str:
    # One report per line: a corpus change shows as a readable diff.
    lines = ["{", f'"about": {json.dumps(data["about"])},',
             f'"min_reports_per_word": {data["min_reports_per_word"]},', '"reports": [']
    rows = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in data["reports"]]
    lines += [row + ("," if i < len(rows) - 1 else "") for i, row in enumerate(rows)]
    lines += ["]", "}"]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not what the corpus gives")
    args = parser.parse_args()
    data = build()
    text = render(data)
    if args.check:
        current = MEMORY.read_text(encoding="utf-8") if MEMORY.is_file() else ""
        if current != text:
            print(f"{MEMORY.relative_to(ROOT)} is stale: run python tools/build_known_reports.py", file=sys.stderr)
            return 1
        return 0
    MEMORY.write_text(text, encoding="utf-8")
    print(f"wrote {MEMORY.relative_to(ROOT)}: {len(data['reports'])} reports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
