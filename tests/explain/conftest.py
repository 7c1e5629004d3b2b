"""Print the corpus score at the end of the run (a session-finish summary line)."""

from __future__ import annotations

SCORE = {}


def pytest_terminal_summary(terminalreporter):
    if SCORE:
        tr = terminalreporter
        tr.write_sep("-", "gpudoctor explain corpus")
        tr.write_line(f"correct root cause as first finding: {SCORE['correct']}/{SCORE['with_cause']} "
                      f"({100.0 * SCORE['correct'] / max(1, SCORE['with_cause']):.1f}%); "
                      f"healthy / not-environment logs without an environment error: "
                      f"{SCORE['clean']}/{SCORE['clean_total']}")
