"""The pipeline's promise: the report comes out, whatever a probe does in the parent process."""

import threading

from gpudoctor import pipeline
from gpudoctor.facts.probe_status import ProbeStatus
from gpudoctor.probes.context import ProbeContext
from gpudoctor.rules import diagnose


def test_a_probe_blocked_in_the_parent_becomes_a_timeout_and_the_rest_comes_out(monkeypatch):
    released = threading.Event()

    def stuck_on_a_dead_nfs_mount(ctx):
        released.wait()  # os.listdir on a hung NFS folder never returns
        return None, []

    def environment(ctx):
        from gpudoctor.probes.environment import probe_environment
        return probe_environment(ctx)

    monkeypatch.setattr(pipeline, "_probe_table", lambda: [("libraries", stuck_on_a_dead_nfs_mount),
                                                         ("environment", environment)])
    try:
        facts = pipeline.collect_facts(ProbeContext(env={"CUDA_VISIBLE_DIVICES": "1"}, timeout=0.5))
    finally:
        released.set()
    assert [(s.name, s.status) for s in facts.probes] == [("libraries", "timeout")]
    assert facts.environment.misspelled[0].name == "CUDA_VISIBLE_DIVICES"  # the other probe's facts are kept
    timeout = next(f for f in diagnose(facts) if f.code == "probe-timeout")
    assert timeout.evidence["probes"] == ["libraries"] and "does not answer" in timeout.detail


def test_a_probe_that_answers_after_the_deadline_does_not_change_the_report(monkeypatch):
    go = threading.Event()
    late_status = ProbeStatus("late", "failed", error="should never appear")

    def late(ctx):
        go.wait()
        return None, [late_status]

    monkeypatch.setattr(pipeline, "_probe_table", lambda: [("late", late)])
    facts = pipeline.collect_facts(ProbeContext(timeout=0.2))
    go.set()
    assert late_status not in facts.probes and facts.probes[0].status == "timeout"
