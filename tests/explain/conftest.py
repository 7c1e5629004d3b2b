"""Print the corpus score at the end of the run (a session-finish summary line)."""

from __future__ import annotations

SCORE = {}
HOLDOUT = {}  # filled by test_holdout.py: overall and per-class shares on the held-out logs


def pytest_terminal_summary(terminalreporter):
    if SCORE or HOLDOUT:
        tr = terminalreporter
        tr.write_sep("-", "gpudoctor explain corpus")
    if SCORE:
        tr.write_line(f"correct root cause as first finding: {SCORE['correct']}/{SCORE['with_cause']} "
                      f"({100.0 * SCORE['correct'] / max(1, SCORE['with_cause']):.1f}%); "
                      f"healthy / not-environment logs without an environment error: "
                      f"{SCORE['clean']}/{SCORE['clean_total']}")
    if HOLDOUT:
        classes = ", ".join(f"{cat} {ok}/{n}" for cat, (ok, n) in sorted(HOLDOUT["by_class"].items()))
        tr.write_line(f"held-out logs, first finding right: {HOLDOUT['right']}/{HOLDOUT['total']} "
                      f"({100.0 * HOLDOUT['right'] / max(1, HOLDOUT['total']):.1f}%); by class: {classes}")
