"""The support-ticket report: one self-contained Markdown file, made from the check JSON.

It reads the JSON contract (not the dataclasses), so a saved `check --json` output, or the JSON
taken back out of an earlier report, renders the same. Layout: verdict, findings with fixes
(root cause first), facts as tables, and the whole JSON in a collapsed block at the end so
support staff can load it back (`gpudoctor report --from` and `gpudoctor diff` read it).

Written for GitHub and ticket systems that render GitHub-flavoured Markdown: raw `<`/`>` in text
would be taken for HTML tags (and `<home>` would vanish), so text is escaped and values go in
code spans.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from ..causes import tally_text
from ..gpu_packages import is_gpu_package
from ..model import Finding
from .. import versions
from ..saved_report import JSON_MARKER

_VERDICT = {"ok": "✅ OK", "warning": "⚠️ Warning", "error": "❌ Error"}
_SEVERITY = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}
_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
_LAYERS = ["hardware", "kernel-driver", "userspace-driver", "visibility", "cuda-libraries", "compatibility",
           "framework", "runtime-test", "logs"]
_COMMAND_START = re.compile(
    r"^(?:sudo|pip3?|python3?|conda|mamba|micromamba|uv|apt|apt-get|dnf|yum|export|unset|nvidia-smi|"
    r"nvidia-modprobe|modprobe|docker|wsl|ldconfig|source|rm|ln|echo|cat|ls)\s")
_MAX_CELL = 300  # characters: a cell longer than this is cut (the full value is in the JSON)


# -- Markdown primitives ----------------------------------------------------------------------

def esc(text: Any) -> str:
    """Plain text safe in a paragraph or a table cell."""
    s = "" if text is None else str(text)
    s = s.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = re.sub(r"([`*_\[\]|])", r"\\\1", s)
    return s.replace("\r", "").replace("\n", "<br>")


def code(text: Any, in_table: bool = True) -> str:
    """An inline code span that survives backticks and, in a table, pipes."""
    s = "" if text is None else str(text).replace("\r", "").replace("\n", " ⏎ ")
    if len(s) > _MAX_CELL:
        s = s[:_MAX_CELL] + "…"
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    if in_table:
        s = s.replace("|", "\\|")
    return f"{ticks}{pad}{s}{pad}{ticks}" if s else "—"


def prose(text: Any) -> str:
    """Text that may contain `code spans` (finding details, fix steps): escape only outside them."""
    s = "" if text is None else str(text)
    parts = re.split(r"(`[^`\n]+`)", s)
    return "".join(p.replace("|", "\\|") if p.startswith("`") and p.endswith("`") and len(p) > 1
                   else esc(p) for p in parts)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> List[str]:
    rows = list(rows)
    if not rows:
        return []
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(cell if cell else "—" for cell in row) + " |" for row in rows]
    return out + [""]


def details(summary: str, body: List[str]) -> List[str]:
    # GitHub needs the blank line after <summary> to render Markdown inside the block.
    return ["<details>", f"<summary>{summary}</summary>", ""] + body + ["</details>", ""]


def fenced(content: str, lang: str = "") -> List[str]:
    longest = max((len(m) for m in re.findall(r"`{3,}", content)), default=2)
    ticks = "`" * max(3, longest + 1)
    return [ticks + lang, content, ticks]


# -- small readers of the JSON ----------------------------------------------------------------

def _get(obj: Any, *path: Any) -> Any:
    for key in path:
        if isinstance(obj, Mapping):
            obj = obj.get(key)
        elif isinstance(obj, list) and isinstance(key, int) and -len(obj) <= key < len(obj):
            obj = obj[key]
        else:
            return None
    return obj


def _gib(n: Any) -> str:
    return f"{n / 1024 ** 3:.1f} GiB" if isinstance(n, (int, float)) else ""


def cuda_version_text(v: Any) -> str:
    """12040 -> 12.4, for a table cell ("" when unknown)."""
    return versions.cuda_version_text(v) or ("" if v is None else str(v))


def _yes(v: Any) -> str:
    return {True: "yes", False: "no"}.get(v, "" if v is None else str(v))


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return _yes(v)
    if isinstance(v, (list, dict)):
        return code(json.dumps(v, separators=(",", ":")))
    return code(v) if v not in (None, "") else ""


# -- sections ---------------------------------------------------------------------------------

def _tally(findings: List[Any]) -> str:
    """Causes, not lines: the same count as the terminal's verdict line (gpudoctor.causes)."""
    parsed = []
    for raw in findings:
        try:
            parsed.append(Finding.from_json(raw))
        except (KeyError, ValueError, TypeError, AttributeError):
            continue
    infos = sum(1 for f in parsed if f.severity.value == "info")
    info_text = f"{infos} info" if infos else ""
    if len(parsed) == infos:
        return info_text or "no findings"
    return tally_text(parsed) + (f", {info_text}" if info_text else "")


def _header(report: Mapping[str, Any], command: str, generated_utc: str, redacted: bool) -> List[str]:
    verdict = str(report.get("verdict", "?"))
    findings = report.get("findings") or []
    tally = _tally(findings)
    lines = [f"# gpudoctor report: {_VERDICT.get(verdict, esc(verdict))}", "",
             f"**{esc(_one_line_summary(report))}** ({tally})", ""]
    made = (f"Made with gpudoctor {esc(report.get('gpudoctor_version', '?'))} by {code(command, False)} "
            f"on {esc(generated_utc)}; the check ran in {esc(report.get('mode', '?'))} mode "
            f"at {esc(report.get('created_utc') or '?')} and took {esc(report.get('duration_s', '?'))} s.")
    privacy = ("User name, home directory, host name, IP addresses and secrets are replaced with "
               "placeholders such as `<home>` and `<host>`." if redacted else
               "**Not redacted**: this file may contain the user name, home directory, host name and IP addresses.")
    return lines + ["> " + made, "> " + prose(privacy), ""]


def _one_line_summary(report: Mapping[str, Any]) -> str:
    facts = report.get("facts") or {}
    gpus = facts.get("gpus") or []
    names = sorted({g.get("name") or "GPU" for g in gpus})
    gpu_text = f"{len(gpus)}× {', '.join(names)}" if gpus else "no NVIDIA GPU listed"
    driver = _get(facts, "driver", "nvml", "driver_version") or _get(facts, "driver", "kernel", "version")
    cuda = cuda_version_text(_get(facts, "driver", "libcuda", "driver_version")
                             or _get(facts, "driver", "nvml", "cuda_driver_version"))
    parts = [gpu_text]
    if driver:
        parts.append(f"driver {driver}" + (f" (CUDA {cuda})" if cuda else ""))
    py = _get(facts, "system", "python_version")
    if py:
        parts.append(f"Python {py}")
    return " · ".join(parts)


def _ordered(findings: List[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """Root causes first, then severity, then bottom layer first (the order of model.root_cause_order)."""
    codes = {f.get("code") for f in findings}

    def key(f: Mapping[str, Any]) -> Any:
        symptom = bool(f.get("caused_by")) and f.get("caused_by") in codes
        layer = f.get("layer")
        return (symptom, _SEVERITY_RANK.get(f.get("severity"), 3),
                _LAYERS.index(layer) if layer in _LAYERS else len(_LAYERS))

    return sorted(findings, key=key)


def _findings(report: Mapping[str, Any]) -> List[str]:
    findings = _ordered(list(report.get("findings") or []))
    lines = ["## Findings", ""]
    if not findings:
        return lines + ["No problems found.", ""]
    lines += ["Root cause first; a finding caused by another says so.", ""]
    for n, f in enumerate(findings, 1):
        lines += _finding(n, f)
    return lines


def _finding(n: int, f: Mapping[str, Any]) -> List[str]:
    icon = _SEVERITY.get(f.get("severity"), "")
    lines = [f"### {n}. {icon} {esc(f.get('title', ''))}", "",
             f"`{f.get('code', '?')}` · {esc(f.get('severity', ''))} · layer: {esc(f.get('layer', ''))}"
             + (f" · caused by `{f['caused_by']}`" if f.get("caused_by") else ""), ""]
    if f.get("detail"):
        lines += [prose(f["detail"]), ""]
    fixes = [str(step) for step in f.get("fix") or []]
    if fixes:
        lines += ["**Fix:**", ""]
        for i, step in enumerate(fixes, 1):
            if _COMMAND_START.match(step) and "`" not in step:
                lines += [f"{i}. Run:", ""] + ["   " + line for line in fenced(step, "sh")] + [""]
            else:
                lines.append(f"{i}. {prose(step)}")
        lines.append("")
    evidence = f.get("evidence") or {}
    if evidence:
        rows = [[code(k), _scalar(v)] for k, v in evidence.items()]
        lines += details("Evidence", table(["fact", "value"], rows))
    return lines


def _system(facts: Mapping[str, Any]) -> List[str]:
    s = facts.get("system") or {}
    container = _yes(s.get("in_container"))
    if s.get("in_container") and s.get("container_evidence"):
        container += " (" + ", ".join(str(e) for e in s["container_evidence"][:3]) + ")"
    rows = [
        ["Operating system", esc(" ".join(str(x) for x in (s.get("os"), s.get("machine")) if x))],
        ["Distribution", esc(s.get("distro") or "")],
        ["Kernel", code(s.get("kernel_release")) if s.get("kernel_release") else ""],
        ["Host name", code(s.get("hostname")) if s.get("hostname") else ""],
        ["Container", esc(container)],
        ["WSL", _yes(s.get("wsl"))],
        ["Python (checked)", code(s.get("python_executable")) + (f" ({esc(s['python_version'])})"
                                                               if s.get("python_version") else "")],
        ["Python (gpudoctor)", code(s.get("gpudoctor_python")) if s.get("gpudoctor_python") else ""],
        ["Environment", esc(s.get("env_kind", ""))],
        ["Conda prefix", code(s.get("conda_prefix")) if s.get("conda_prefix") else ""],
        ["Virtual env", code(s.get("virtual_env")) if s.get("virtual_env") else ""],
    ]
    return ["### System", ""] + table(["", ""], [r for r in rows if r[1]])


def _driver(facts: Mapping[str, Any]) -> List[str]:
    d = facts.get("driver") or {}
    kernel, libcuda, nvml = d.get("kernel") or {}, d.get("libcuda") or {}, d.get("nvml") or {}
    modules = kernel.get("modules") or {}
    nodes = kernel.get("device_nodes") or []
    bad_nodes = [n.get("path") for n in nodes if not (n.get("exists") and n.get("accessible"))]
    init = libcuda.get("init_result")
    init_text = "" if init is None else ("0 (success)" if init == 0 else
                                        f"{init} {libcuda.get('init_error_name') or ''}".strip())
    rows = [
        ["NVIDIA devices on the PCI bus", str(len(d.get("pci_devices") or []))],
        ["Kernel module version", code(kernel.get("version")) if kernel.get("version") else "not loaded"],
        ["Kernel modules", esc(", ".join(f"{m} {'✔' if ok else '✘'}" for m, ok in modules.items()))],
        ["Device nodes", esc(f"{len(nodes)} found" + (f"; not usable: {', '.join(map(str, bad_nodes))}"
                                                     if bad_nodes else ""))] if nodes else ["Device nodes", ""],
        ["nouveau loaded", "yes" if kernel.get("nouveau_loaded") else ""],
        ["libcuda", code(libcuda.get("path")) if libcuda.get("path") else esc(libcuda.get("load_error") or "")],
        ["CUDA driver version", esc(cuda_version_text(libcuda.get("driver_version")))],
        ["cuInit", esc(init_text)],
        ["CUDA devices", esc(libcuda.get("device_count"))],
        ["NVML driver version", code(nvml.get("driver_version")) if nvml.get("driver_version") else
         esc(nvml.get("error") or "")],
        ["NVML CUDA version", esc(cuda_version_text(nvml.get("cuda_driver_version")))],
        ["NVML library", code(nvml.get("library_path")) if nvml.get("library_path") else ""],
    ]
    if libcuda.get("init_error_string"):
        rows.append(["cuInit error", esc(libcuda["init_error_string"])])
    return ["### Driver", ""] + table(["", ""], [r for r in rows if r[1] not in ("", "None")])


def _gpu_processes(gpus: List[Mapping[str, Any]]) -> List[str]:
    """Who holds each GPU; the report's redaction has already replaced users, homes and secrets."""
    rows = []
    for g in gpus:
        for p in g.get("processes") or []:
            if p.get("visible") is False:
                command = "(not visible: another PID namespace, or ended)" + (f" {p['name']}" if p.get("name") else "")
            else:
                command = p.get("command") or p.get("name") or ""
            rows.append([str(g.get("index", "")), esc(p.get("pid")), esc(p.get("user")),
                         esc(_gib(p.get("used_memory"))) if p.get("used_memory") else "", code(command)])
    return table(["nvidia-smi #", "pid", "user", "GPU memory", "command"], rows)


def _gpus(facts: Mapping[str, Any]) -> List[str]:
    gpus = facts.get("gpus") or []
    lines = ["### GPUs", ""]
    if not gpus:
        return lines + ["No GPU listed by NVML.", ""]
    rows = []
    for g in gpus:
        mem = f"{_gib(g.get('memory_used'))} / {_gib(g.get('memory_total'))}" if g.get("memory_total") else ""
        procs = g.get("processes") or []
        rows.append([str(g.get("index", "")), esc(g.get("name")), esc(g.get("compute_capability")), esc(mem),
                     code(g.get("pci_bus_id")), code(g.get("uuid")),
                     esc(f"{len(procs)}") if procs else "0" if "processes" in g else "",
                     {True: "on", False: "off"}.get(g.get("mig_mode"), "")])
    lines += table(["nvidia-smi #", "name", "CC", "memory used / total", "PCI bus", "UUID", "processes", "MIG"],
                   rows)
    lines += _gpu_processes(gpus)
    errors = [(g.get("index"), q, e) for g in gpus for q, e in (g.get("errors") or {}).items()]
    if errors:
        lines += details("NVML errors", table(["GPU", "query", "error"],
                                              [[str(i), code(q), esc(e)] for i, q, e in errors]))
    return lines


def _visibility(facts: Mapping[str, Any]) -> List[str]:
    v = facts.get("visible_devices") or {}
    cvd = v.get("cuda_visible_devices")
    lines = ["### Visible devices (logical ↔ physical)", "",
             f"`CUDA_VISIBLE_DEVICES` = {code(cvd, False) if cvd is not None else '(not set)'} · "
             f"`CUDA_DEVICE_ORDER` = {code(v.get('cuda_device_order') or 'FASTEST_FIRST', False)} · "
             f"mapping from: {esc(v.get('mapping_source', 'none'))}", ""]
    notes = []
    if v.get("hides_all"):
        notes.append("The variable hides every GPU.")
    if v.get("stopped_at"):
        notes.append(f"CUDA stops at the invalid entry {code(v['stopped_at'], False)} and ignores it and all after it.")
    if v.get("duplicates"):
        notes.append("Duplicate entries: " + ", ".join(code(d, False) for d in v["duplicates"]))
    lines += [f"- {n}" for n in notes] + ([""] if notes else [])
    rows = [[code(m.get("logical")), esc(m.get("physical_index")), esc(m.get("name")), code(m.get("pci_bus_id")),
             code(m.get("uuid")), esc(_gib(m.get("memory_free")))] for m in v.get("mapping") or []]
    return lines + table(["CUDA device", "nvidia-smi #", "name", "PCI bus", "UUID", "free memory"], rows)


def _libraries(facts: Mapping[str, Any]) -> List[str]:
    libs = _get(facts, "libraries", "libraries") or []
    lines = ["### CUDA libraries", ""]
    rows = []
    for lib in libs:
        loaded = {r.get("real_path") for r in lib.get("loader_resolution") or [] if r.get("real_path")}
        for r in lib.get("loader_resolution") or []:
            if r.get("error") and not r.get("real_path"):
                rows.append([esc(lib.get("name")), code(r.get("soname")), "", esc("not loadable: " + str(r["error"])),
                             "", ""])
        for c in lib.get("copies") or []:
            rows.append([esc(lib.get("name")), code(c.get("soname")), esc(c.get("version") or c.get("version_from_name")),
                         code(c.get("real_path") or c.get("path")), esc(", ".join(c.get("found_via") or [])),
                         "✔" if c.get("real_path") in loaded else esc(c.get("load_error") or "")])
    lines += table(["library", "soname", "version", "real path", "found via", "loaded by dlopen"], rows) \
        if rows else ["No CUDA library found.", ""]
    tools = _get(facts, "libraries", "tools") or []
    trows = [[esc(t.get("name")), esc(t.get("version")), code(t.get("path")) if t.get("path") else esc(t.get("error"))]
             for t in tools]
    if trows:
        lines += ["Tools:", ""] + table(["tool", "version", "path"], trows)
    dirs = _get(facts, "libraries", "search_dirs") or []
    if dirs:
        lines += details("Library search order", table(["#", "directory", "via"], [
            [str(i), code(d[0] if isinstance(d, list) and d else d), esc(d[1] if isinstance(d, list) and len(d) > 1 else "")]
            for i, d in enumerate(dirs, 1)]))
    return lines


_FRAMEWORK_ROWS = [  # (label, where to look: live first, then static)
    ("Version", "version"), ("Distribution", "distribution"), ("Build", "build"),
    ("Built with CUDA", "cuda_version"), ("cuDNN", "cudnn_version"), ("NCCL", "nccl_version"),
    ("Probe status", "status"), ("Imported", "import_ok"), ("Import error", "import_error"),
    ("GPU available", "gpu_available"), ("Device count", "device_count"), ("CUDA init error", "cuda_init_error"),
    ("cuDNN acceptable", "cudnn_acceptable"), ("Arch list", "arch_list"), ("Package dir", "package_dir"),
    ("Op skipped", "op_skipped_reason"),
]


def _frameworks(facts: Mapping[str, Any]) -> List[str]:
    fws = _get(facts, "frameworks", "frameworks") or {}
    lines = ["### Frameworks", ""]
    if not fws:
        return lines + ["No deep-learning framework found in the checked interpreter.", ""]
    for name, fw in fws.items():
        lines += [f"#### {esc(name)}", ""] + _framework_table(fw if isinstance(fw, Mapping) else {"value": fw})
    return lines


def _framework_table(fw: Mapping[str, Any]) -> List[str]:
    static = fw.get("static") if isinstance(fw.get("static"), Mapping) else {}
    live = fw.get("live") if isinstance(fw.get("live"), Mapping) else {}
    flat = {k: v for k, v in fw.items() if k not in ("static", "live", "name")}
    rows = []
    for label, key in _FRAMEWORK_ROWS:
        value = next((src[key] for src in (live, static, flat) if src.get(key) not in (None, "", [])), None)
        if value is not None:
            rows.append([label, _value_cell(key, value)])
    used = {key for _, key in _FRAMEWORK_ROWS}
    rows += [[esc(k), _value_cell(k, v)] for k, v in flat.items() if k not in used and not isinstance(v, (dict, list))]
    ops = [op for op in live.get("ops") or [] if isinstance(op, Mapping)]
    for op in ops:
        result = "ok" if op.get("ok") else ("failed" if op.get("ran") else "did not run")
        extra = f", max error {op['max_abs_error']:g}" if isinstance(op.get("max_abs_error"), (int, float)) else ""
        rows.append([f"Op `{esc(op.get('name'))}`", esc(f"{result} on {op.get('device') or '?'}{extra}")
                     + (" — " + code(op["error"]) if op.get("error") else "")])
    devices = [d for d in live.get("devices") or [] if isinstance(d, Mapping)]
    if devices:
        rows.append(["Devices", esc("; ".join(f"{d.get('index')}: {d.get('name')} (CC {d.get('compute_capability')})"
                                              for d in devices))])
    return table(["", ""], rows)


def _value_cell(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return _yes(value)
    if isinstance(value, list):
        return code(" ".join(str(v) for v in value))
    if key in ("import_error", "cuda_init_error", "op_skipped_reason"):
        return esc(value)
    return code(value)


def _packages(facts: Mapping[str, Any]) -> List[str]:
    fw = facts.get("frameworks") or {}
    packages: Dict[str, str] = dict(fw.get("packages") or {})
    conda = [p for p in fw.get("conda_packages") or [] if isinstance(p, Mapping)]
    lines = ["### Packages", ""]
    gpu = sorted((n, v) for n, v in packages.items() if is_gpu_package(n))
    rows = [[code(n), code(v), "pip"] for n, v in gpu]
    rows += [[code(p.get("name")), code(p.get("version")), esc("conda " + (p.get("build") or ""))] for p in conda]
    lines += table(["GPU-related package", "version", "from"], rows) if rows else \
        ["No GPU-related package installed.", ""]
    others = sorted((n, v) for n, v in packages.items() if not is_gpu_package(n))
    if others:
        body = fenced("\n".join(f"{n}=={v}" for n, v in others))
        lines += details(f"All other packages ({len(others)})", body + [""])
    return lines


def _environment(facts: Mapping[str, Any]) -> List[str]:
    env = facts.get("environment") or {}
    rows = [[code(k), code(v)] for k, v in sorted((env.get("variables") or {}).items())]
    lines = ["### Environment variables", "", "Only variables that change what CUDA programs load or see are collected.", ""]
    lines += table(["variable", "value"], rows) if rows else ["None of them is set.", ""]
    miss = [m for m in env.get("misspelled") or [] if isinstance(m, Mapping)]
    if miss:
        lines += table(["set (misspelled)", "meant", "value"],
                       [[code(m.get("name")), code(m.get("meant")), code(m.get("value"))] for m in miss])
    return lines


def _runtime(facts: Mapping[str, Any]) -> List[str]:
    rt = facts.get("runtime_test") or {}
    lines = ["### Runtime test (driver API, no framework)", ""]
    if not rt.get("ran"):
        return lines + [esc(f"Not run: {rt.get('skipped_reason') or 'unknown reason'}."), ""]
    rows = [[esc(d.get("ordinal")), code(d.get("pci_bus_id")), "✔ ok" if d.get("ok") else "✘ failed",
             esc(d.get("step")), esc(d.get("error_name") or ""), esc(d.get("max_abs_error"))]
            for d in rt.get("devices") or []]
    return lines + table(["CUDA device", "PCI bus", "result", "step reached", "error", "max abs error"], rows)


def _probes(facts: Mapping[str, Any]) -> List[str]:
    probes = [p for p in facts.get("probes") or [] if isinstance(p, Mapping)]
    if not probes:
        return []
    rows = [[esc(p.get("name")), esc(p.get("status")), esc(p.get("duration_s")), esc(p.get("error") or "")]
            for p in probes]
    bad = [p for p in probes if p.get("stderr_tail") and p.get("status") != "ok"]
    body = table(["probe", "status", "seconds", "error"], rows)
    for p in bad:
        body += [f"stderr of `{esc(p.get('name'))}`:", ""] + fenced(str(p["stderr_tail"])[-2000:]) + [""]
    return details("Probes (how each ran)", body)


def _json_block(report: Mapping[str, Any]) -> List[str]:
    text = json.dumps(report, indent=1, ensure_ascii=False, sort_keys=False)
    body = [JSON_MARKER, ""] + fenced(text, "json") + [""]
    return ["## Machine-readable report", "",
            "Support staff: load it back with `gpudoctor report --from THIS_FILE.md` or compare two with "
            "`gpudoctor diff A.md B.md`.", ""] + details("The whole check JSON", body)


def render_markdown(report: Mapping[str, Any], *, command: str = "gpudoctor report",
                    generated_utc: Optional[str] = None, redacted: bool = True) -> str:
    """The whole report as Markdown. `report` is the check JSON (already redacted if it should be)."""
    generated_utc = generated_utc or str(report.get("created_utc") or "")
    facts = report.get("facts") or {}
    lines = _header(report, command, generated_utc, redacted) + _findings(report) + ["## Facts", ""]
    for section in (_system, _driver, _gpus, _visibility, _libraries, _frameworks, _packages, _environment,
                    _runtime, _probes):
        lines += section(facts)
    lines += _json_block(report)
    return "\n".join(lines).rstrip() + "\n"
