"""probes → facts → diagnosis → report. The one place that runs a whole check.

Probes run in parallel threads (each probe that loads native code runs its own child process),
so a full check costs about as long as its slowest probe.
"""

from __future__ import annotations

import datetime as _dt
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import __version__
from .facts import Facts
from .facts.probe_status import ProbeStatus
from .facts.serialize import to_json
from .model import Finding, root_cause_order, verdict_of
from .probes.context import ProbeContext

SCHEMA_VERSION = "1"

ProgressCallback = Callable[[str, str], None]  # (probe name, "started" | "done")


@dataclass
class CheckOptions:
    quick: bool = False
    python: Optional[str] = None  # target interpreter; None: gpudoctor's own
    timeout: float = 30.0
    env: Optional[Dict[str, str]] = None  # None: os.environ


@dataclass
class Report:
    facts: Facts
    findings: List[Finding]
    duration_s: float = 0.0
    created_utc: str = ""
    quick: bool = False

    @property
    def verdict(self) -> str:
        return verdict_of(self.findings)

    @property
    def exit_code(self) -> int:
        return 1 if self.verdict == "error" else 0

    def to_json(self) -> Dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "gpudoctor_version": __version__,
            "verdict": self.verdict,
            "created_utc": self.created_utc,
            "mode": "quick" if self.quick else "full",
            "duration_s": round(self.duration_s, 3),
            "findings": [f.to_json() for f in self.findings],
            "facts": to_json(self.facts),
        }


def _probe_table() -> List[Tuple[str, Callable[[ProbeContext], Tuple[Any, List[ProbeStatus]]]]]:
    # Imported here so that `gpudoctor --help` stays fast.
    from .probes.cuda_driver import probe_cuda_driver
    from .probes.environment import probe_environment
    from .probes.frameworks import probe_frameworks
    from .probes.hardware import probe_pci_devices
    from .probes.kernel_driver import probe_kernel_driver
    from .probes.libraries import probe_libraries
    from .probes.nvml import probe_nvml
    from .probes.runtime_test import probe_runtime_test
    from .probes.system import probe_system

    return [
        ("system", probe_system),
        ("environment", probe_environment),
        ("pci", probe_pci_devices),
        ("kernel-driver", probe_kernel_driver),
        ("cuda-driver", probe_cuda_driver),
        ("nvml", probe_nvml),
        ("libraries", probe_libraries),
        ("frameworks", probe_frameworks),
        ("runtime-test", probe_runtime_test),
    ]


def probe_deadline(ctx: ProbeContext) -> float:
    """How long the slowest probe may take. A probe may run two children in a row (the package
    scan, then a framework import), each under ctx.timeout; past this, whatever blocks it (a file
    system that does not answer, a pipe held open by an escaped grandchild) is reported instead."""
    return 2 * ctx.timeout + 2.0


def collect_facts(ctx: ProbeContext, on_progress: Optional[ProgressCallback] = None) -> Facts:
    """Run every probe at once; the report comes out by the deadline whatever a probe does.

    Daemon threads, not a pool: a pool joins its threads at exit, so one probe blocked in the
    kernel (a hung NFS mount on LD_LIBRARY_PATH) would hang the whole command."""
    from .probes.assemble import assemble_facts

    table = _probe_table()
    outcomes: Dict[str, Any] = {}
    statuses: List[ProbeStatus] = []
    lock = threading.Lock()
    closed = False

    def run(name: str, probe: Callable[[ProbeContext], Tuple[Any, List[ProbeStatus]]]) -> None:
        if on_progress:
            on_progress(name, "started")
        try:
            value, probe_statuses = probe(ctx)
        except Exception as exc:  # a probe must never raise; if one does, that is our bug, reported
            value, probe_statuses = None, [ProbeStatus(name, "failed", error=f"gpudoctor bug: {exc!r}")]
        with lock:
            if closed:
                return  # too late: the report went out without it
            outcomes[name] = value
            statuses.extend(probe_statuses)
        if on_progress:
            on_progress(name, "done")

    started = time.monotonic()
    deadline = started + probe_deadline(ctx)
    threads = [threading.Thread(target=run, args=entry, name=f"probe-{entry[0]}", daemon=True) for entry in table]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    with lock:
        closed = True
        for (name, _), thread in zip(table, threads):
            if thread.is_alive():
                statuses.append(ProbeStatus(name, "timeout", round(time.monotonic() - started, 3),
                                            f"no answer within {probe_deadline(ctx):g} s (a file system or "
                                            "device that does not answer?)"))
        return assemble_facts(ctx, dict(outcomes), list(statuses))


def _load_compat_tables() -> None:
    """Parse the compat tables while the probes' children run (no imports happen here: importing
    in two threads at once can trip Python's module-lock deadlock detection)."""
    from . import compat

    try:
        compat.tables()
    except compat.CompatDataError:
        pass  # reported by the rules that need them


def run_check(options: Optional[CheckOptions] = None, on_progress: Optional[ProgressCallback] = None) -> Report:
    from .rules import diagnose  # before any probe thread starts: imports stay single-threaded

    options = options or CheckOptions()
    started = time.monotonic()
    ctx = ProbeContext.from_environment(python=options.python, timeout=options.timeout,
                                        quick=options.quick, env=options.env)
    tables = threading.Thread(target=_load_compat_tables, name="compat-tables", daemon=True)
    tables.start()
    facts = collect_facts(ctx, on_progress)
    tables.join()
    findings = root_cause_order(diagnose(facts))
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return Report(facts, findings, time.monotonic() - started, created, options.quick)
