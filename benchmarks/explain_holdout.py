"""Measure `gpudoctor explain` on the held-out corpus (tests/explain/holdout): logs collected
independently of the signatures, so the share is an honest estimate. Never tune signatures to it.

    python benchmarks/explain_holdout.py [--verbose]
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from pathlib import Path  # noqa: E402

from gpudoctor.explain import explain_stream  # noqa: E402
from tests.explain.corpus_cases import load_cases  # noqa: E402

HOLDOUT = os.path.join(ROOT, "tests", "explain", "holdout")
ENVIRONMENT_ERRORS = ("error", "warning")


def first_problem(findings):
    """The first finding that names a problem (errors and warnings, then not-environment)."""
    for finding in findings:
        if finding.severity.value in ENVIRONMENT_ERRORS or finding.code == "not-environment":
            return finding.code
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    cases = load_cases(Path(HOLDOUT))
    right = 0
    for case in cases:
        with open(case["path"], "rb") as log:
            got = first_problem(explain_stream(log, case["file"]).findings)
        ok = got == case["expected"]
        right += ok
        if args.verbose or not ok:
            print(f"{'ok  ' if ok else 'MISS'} {case['id']:50} expected {case['expected'] or '(none)':26} got {got or '(none)'}")
    print(f"held-out corpus: {right}/{len(cases)} first findings match ({100 * right / len(cases):.0f}%)")


if __name__ == "__main__":
    main()
