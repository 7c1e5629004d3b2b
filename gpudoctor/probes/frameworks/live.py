"""Live framework facts: each installed framework imported in its own child, all in parallel.

A child runs on the target interpreter with the user's environment, under the probe timeout.
Everything it writes to stdout/stderr goes to a file the parent reads afterwards (whole, even
after a crash or a kill), which is where TensorFlow's C++ log lines are parsed from.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Dict, List, Mapping

from ...facts.frameworks import FrameworkFacts, FrameworkLive
from ...facts.probe_status import ProbeStatus
from ...facts.serialize import from_json
from ..context import ProbeContext
from ..runner import ChildResult, ChildSpec, run_children
from .logparse import parse_framework_log
from .packages import child_env

STDERR_KEEP_CHARS = 6000


def probe_name(framework: str) -> str:
    return "framework-" + framework


def framework_env(ctx: ProbeContext, framework: str) -> Dict[str, str]:
    extra: Dict[str, str] = {}
    if framework == "tensorflow":
        # TensorFlow says why it cannot use the GPU only in its C++ log: level 0 lets it through,
        # and newer releases log dlopen failures at VLOG(1) in dso_loader.cc.
        extra["TF_CPP_MIN_LOG_LEVEL"] = "0"
        vmodule = ctx.env.get("TF_CPP_VMODULE", "")
        if "dso_loader" not in vmodule:
            extra["TF_CPP_VMODULE"] = ",".join(p for p in (vmodule, "dso_loader=1") if p)
    return child_env(ctx, extra)


def probe_live(ctx: ProbeContext, frameworks: Mapping[str, FrameworkFacts]) -> List[ProbeStatus]:
    """Fill `live` of each framework; return one ProbeStatus per child."""
    if not frameworks:
        return []
    workdir = tempfile.mkdtemp(prefix="gpudoctor-frameworks-")
    try:
        logs = {name: os.path.join(workdir, name + ".log") for name in frameworks}
        specs = [ChildSpec(probe_name(name), name + "_child.py", ctx.python, framework_env(ctx, name),
                           ctx.timeout, args=("--stderr-file", logs[name])) for name in frameworks]
        results = run_children(specs)
        statuses = []
        for name, framework in frameworks.items():
            result = results[probe_name(name)]
            log_text = _read(logs[name]) + result.stderr_tail
            framework.live = live_from_result(name, result, log_text)
            statuses.append(ProbeStatus(result.name, result.status, result.duration_s,
                                        _status_error(framework.live, result), log_text[-2000:]))
        return statuses
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _status_error(live: FrameworkLive, result: ChildResult) -> "str | None":
    if result.error and live.phase:
        return "%s (during %s)" % (result.error, live.phase)
    return result.error or live.import_error


# Child record keys that are not FrameworkLive fields of the same name.
_RENAMED = {"physical_gpus": "physical_gpus", "logical_gpus": "logical_gpus",
            "cudnn_version_raw": "cudnn_version_raw", "runtime_version_raw": "runtime_version_raw",
            "driver_version_raw": "driver_version_raw"}


def live_from_result(name: str, result: ChildResult, log_text: str) -> FrameworkLive:
    records: Dict[str, Any] = dict(result.records)
    imported = records.pop("import", None) or {}
    records.pop("pid", None)
    details = dict(records.pop("details", None) or {})
    for key in _RENAMED:
        if key in records:
            details[_RENAMED[key]] = records.pop(key)
    live: FrameworkLive = from_json(FrameworkLive, dict(records, name=name, probe=result.name))
    live.details = details
    live.import_ok = bool(imported.get("ok"))
    live.import_seconds = imported.get("seconds")
    live.import_error = imported.get("error")
    live.traceback = imported.get("traceback")
    live.signal = result.signal
    live.duration_s = result.duration_s
    live.log_lines = parse_framework_log(log_text)
    live.stderr_tail = log_text[-STDERR_KEEP_CHARS:]
    live.status = _status(result, imported)
    if live.status == "timeout" and not live.phase:
        live.phase = "start"
    return live


def _status(result: ChildResult, imported: Mapping[str, Any]) -> str:
    if result.status in ("timeout", "crashed", "not-started"):
        return result.status
    if imported and not imported.get("ok"):
        return "import-failed"
    if not imported:
        return "failed"  # it exited before even trying the import (a broken interpreter)
    return "ok" if result.status == "ok" else result.status
