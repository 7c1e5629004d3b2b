"""One generic matcher over the signature catalogue, and the diagnosis of what it found.

Lines come from the reader; each line is tried against the signatures whose keywords it
contains. Matches are folded into at most one finding per (code, subject), facts (versions,
names) are kept for the templates, and at the end the findings are linked (caused_by) and
ordered root cause first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

from ..codes import CATALOG, make_finding
from ..model import Finding, Severity
from .catalogue import Catalogue, Signature, load_catalogue
from .context import apply_context
from .collect_env_causes import read_collect_env
from .conda_causes import reread_conda_python_conflicts, reread_removed_cpu_packages
from .cuda_causes import (and_cuda_hint, library_install_steps, merge_missing_libraries, reread_cudnn_major,
                          unnamed_missing_libraries)
from .driver_reports import read_driver_versions, read_loaded_modules, wsl_from_smi_versions
from .enrich import ENRICHERS
from .extension_causes import reread_foreign_cuda_runtime, reread_foreign_toolkit_headers
from .install_causes import reread_pip_failures
from .memory_causes import idle_full_gpu, reread_handle_failures
from .program_causes import read_program_causes
from .shadowed_libraries import reread_shadowed_siblings
from .templates import first, render, render_all
from .tf_cuda_causes import read_tf_cuda
from .wrapped import wrapped_pairs

MAX_FINDINGS = 200  # distinct (code, subject) pairs kept; a log cannot make memory grow
MAX_LINES_KEPT = 5  # line numbers kept per finding
MAX_TEXT = 400  # characters of the first matching line kept as evidence
# A signature of these ids folds into any other finding with the same code: it says less.
GENERIC_SIGNATURES = ("cuda-error-table", "tf-cudart-stub-no-runtime", "jax-unable-to-load-cuda")
# Findings a CUDA error explains only when they are found with it (e.g. 100 after no driver).
DRIVER_CAUSES = ("driver-not-loaded", "device-nodes-missing", "uvm-not-loaded", "libcuda-missing",
                 "nvml-driver-mismatch", "no-visible-gpu", "gpu-memory-full", "gpu-arch-unsupported",
                 "gpu-unavailable")  # (a GPU lost from the bus fails every later call: CUDA_ERROR_UNKNOWN, ...)


@dataclass
class Hit:
    """Matches of one finding (code, subject), folded together."""

    sig: Signature
    order: int  # catalogue position of sig: lower is more specific
    code: str
    values: Dict[str, Any]
    first_line: int
    text: str
    lines: List[int] = field(default_factory=list)
    count: int = 0  # log lines that showed it
    signatures: List[str] = field(default_factory=list)
    last_line: int = 0
    seen: Dict[str, List[str]] = field(default_factory=dict)  # every value of a group over the folded lines

    def remember(self, values: Dict[str, Any]) -> None:
        """One finding, many symptoms: keep what differs between them (the GPUs of one full-memory problem)."""
        for k, v in values.items():
            if not k.startswith("_") and isinstance(v, str):
                kept = self.seen.setdefault(k, [])
                if v not in kept and len(kept) < MAX_LINES_KEPT * 4:
                    kept.append(v)


@dataclass
class Note:
    """A known-harmless message (or an optional library) seen in the log."""

    id: str
    meaning: str
    first_line: int
    text: str
    count: int = 0


@dataclass
class Diagnosis:
    findings: List[Finding]
    facts: Dict[str, Any]
    notes: List[Note]


class Explainer:
    def __init__(self, catalogue: Optional[Catalogue] = None) -> None:
        self.cat = catalogue or load_catalogue()
        self.order = {sig.id: i for i, sig in enumerate(self.cat.signatures)}
        self.hits: Dict[Tuple[str, str], Hit] = {}
        self.facts: Dict[str, Any] = {}
        self.notes: Dict[str, Note] = {}
        # optional libraries found missing, kept so that a log which turns out to need them can read them again
        self.optional_misses: List[Tuple[Signature, Dict[str, Optional[str]], int, str, str]] = []

    @property
    def keywords(self) -> List[str]:
        return list(self.cat.by_keyword)

    @property
    def saturable(self) -> List[str]:
        """Keywords that only harmless or fact signatures use: a flood of them adds nothing."""
        return [kw for kw, sigs in self.cat.by_keyword.items() if all(s.kind in ("benign", "fact") for s in sigs)]

    # -- matching ---------------------------------------------------------------------
    def feed(self, lineno: int, line: str, keywords: List[str]) -> None:
        sigs: Dict[str, Signature] = {}
        for kw in keywords:
            for sig in self.cat.by_keyword.get(kw, ()):
                sigs[sig.id] = sig
        read_sonames: Set[str] = set()  # a library a more specific signature has read on this line
        for sig in sorted(sigs.values(), key=lambda s: self.order[s.id]):
            for m in sig.regex.finditer(line):
                groups = m.groupdict()
                if sig.code == "@soname":
                    if groups.get("soname") in read_sonames:
                        break  # e.g. a dependency of an optional library, already noted as optional
                    read_sonames.add(str(groups.get("soname")))
                self._match(sig, groups, lineno, line)
                if sig.kind != "fact":
                    break  # one finding per signature and line is enough

    def feed_text(self, text: str, first_lineno: int = 1) -> None:
        """Match a small text directly (tests, or callers that hold the log in memory)."""
        kws = self.keywords
        for i, line in enumerate(text.splitlines()):
            low = line.lower()
            found = [k for k in kws if k in low]
            if found:
                self.feed(first_lineno + i, line, found)

    def readings(self, line: str) -> Set[Tuple[str, str]]:
        """What the signatures read in this line alone: the findings' (code, subject) and the notes' ids."""
        probe = Explainer(self.cat)
        probe.feed_text(line)
        return set(probe.hits) | {("note", note_id) for note_id in probe.notes}

    def reads(self, line: str) -> bool:
        """Whether a signature reads this line as a problem or as a harmless message (a fact alone is not a reading)."""
        return bool(self.readings(line))

    def feed_wrapped(self, text: str) -> None:
        """Read the pairs of lines a paste may have folded (wrapped.py) as one line, where the pair
        reads as something that neither line reads alone."""
        alone: Dict[str, Set[Tuple[str, str]]] = {}

        def read_alone(line: str) -> Set[Tuple[str, str]]:
            if line not in alone:
                alone[line] = self.readings(line)
            return alone[line]

        lines = text.split("\n")
        for lineno, joins in wrapped_pairs(text):
            first_half, second_half = lines[lineno - 1], lines[lineno]
            for joined in joins:
                if not any(kw in joined.lower() for kw in self.cat.by_keyword):
                    continue
                if self.readings(joined) - read_alone(first_half) - read_alone(second_half):
                    self.feed_text(joined, lineno)
                    break

    def _match(self, sig: Signature, groups: Dict[str, Optional[str]], lineno: int, line: str,
               required: bool = False) -> None:
        values: Dict[str, Any] = {k: v.strip() for k, v in groups.items() if v}
        if sig.kind == "fact":
            for k, v in values.items():
                if sig.collect:  # every value, in order, bounded
                    seen = self.facts.setdefault(k, [])
                    if v not in seen and len(seen) < MAX_LINES_KEPT * 10:
                        seen.append(v)
                else:
                    self.facts.setdefault(k, v)
            return
        if sig.kind == "benign":
            self._note(sig.id, sig.meaning, lineno, line)
            return
        enrichers = list(sig.enrich)
        if sig.code == "@soname":
            enrichers.insert(0, "soname:soname")
        elif sig.code == "@cuda_error":
            enrichers.insert(0, "cuda_error:err")
        for spec in enrichers:
            name, _, arg = spec.partition(":")
            extra = ENRICHERS[name](self.cat, values, line, arg)
            if extra is None:
                return  # the match is not about the GPU stack after all
            values.update(extra)
        code = values.pop("_code", None) or sig.code
        if values.pop("_optional", False) and not required:
            self.optional_misses.append((sig, groups, lineno, line, str(values.get("soname") or "")))
            wanted = values.get("wanted")
            meaning = (f"{values.get('soname')} is missing, so the optional {wanted} cannot be loaded; nothing needs it."
                       if wanted and wanted != values.get("soname")
                       else f"{values.get('soname')} ({values.get('component')}) is missing; it is optional.")
            self._note(f"optional:{values.get('soname', sig.id)}", meaning, lineno, line)
            return
        subject = render(sig.subject, values) if sig.subject else sig.id
        key = (code, subject)
        hit = self.hits.get(key)
        order = self.order[sig.id]
        if hit is None:
            if len(self.hits) >= MAX_FINDINGS:
                return
            hit = self.hits[key] = Hit(sig=sig, order=order, code=code, values=values,
                                       first_line=lineno, text=line.strip()[:MAX_TEXT])
        elif order < hit.order:  # a more specific signature describes it better
            hit.sig, hit.order, hit.values = sig, order, {**hit.values, **values}
        else:  # a later line of the same finding adds what the first one did not say
            for name, value in values.items():
                hit.values.setdefault(name, value)
        hit.remember(values)
        if lineno != hit.last_line:
            hit.count += 1
            hit.last_line = lineno
        if len(hit.lines) < MAX_LINES_KEPT and lineno not in hit.lines:
            hit.lines.append(lineno)
        if sig.id not in hit.signatures:
            hit.signatures.append(sig.id)

    def _note(self, note_id: str, meaning: str, lineno: int, line: str) -> None:
        note = self.notes.get(note_id)
        if note is None:
            note = self.notes[note_id] = Note(note_id, meaning, lineno, line.strip()[:MAX_TEXT])
        note.count += 1

    # -- diagnosis --------------------------------------------------------------------
    def _require_profiler_libraries(self) -> None:
        """CUPTI is optional until the program profiles: then its absence is what the profiler fails on."""
        for sig, groups, lineno, line, soname in self.optional_misses:
            if soname.lower().startswith(("libcupti", "cupti")):
                self.notes.pop(f"optional:{soname}", None)
                self._match(sig, groups, lineno, line, required=True)

    def diagnose(self) -> Diagnosis:
        if self.facts.get("profiler_used"):
            self._require_profiler_libraries()
        hits = self._fold_generic(list(self.hits.values()))
        findings = [self._finding(h) for h in hits]
        findings = _link_causes(findings, hits)
        findings = merge_missing_libraries(findings, self.facts)
        findings = reread_cudnn_major(findings, self.facts)
        findings = unnamed_missing_libraries(findings)
        findings = reread_foreign_cuda_runtime(findings, self.facts)
        findings = reread_foreign_toolkit_headers(findings, self.facts)
        findings = reread_shadowed_siblings(findings, self.facts)
        findings = reread_pip_failures(findings, self.facts)
        findings = reread_conda_python_conflicts(findings, self.facts)
        findings = reread_removed_cpu_packages(findings, self.facts)
        findings = reread_handle_failures(findings, self.facts)
        findings = read_collect_env(findings, self.facts)
        self.facts.update(wsl_from_smi_versions(self.facts))  # a fact the context rules read below
        findings = read_driver_versions(findings, self.facts)
        findings = read_loaded_modules(findings, self.facts)
        findings = read_tf_cuda(findings, self.facts)
        findings = read_program_causes(findings, self.facts)
        findings = apply_context(findings, self.facts)
        findings = idle_full_gpu(findings, self.facts)
        return Diagnosis(findings=rank(findings), facts=dict(self.facts),
                         notes=sorted(self.notes.values(), key=lambda n: n.first_line))

    def _fold_generic(self, hits: List[Hit]) -> List[Hit]:
        kept: List[Hit] = []
        for h in hits:
            other = next((o for o in hits if o is not h and o.code == h.code
                          and o.sig.id not in GENERIC_SIGNATURES), None)
            if h.sig.id in GENERIC_SIGNATURES and other is not None:
                other.count += h.count
                other.lines = sorted(set(other.lines + h.lines))[:MAX_LINES_KEPT]
                other.signatures += [s for s in h.signatures if s not in other.signatures]
                continue
            kept.append(h)
        return kept

    def _finding(self, h: Hit) -> Finding:
        lists = {f"{k}_list": ", ".join(v) for k, v in h.seen.items()}
        values = {**self.facts, **lists, "and_cuda_hint": and_cuda_hint(self.facts), **h.values}
        entry = CATALOG[h.code]
        severity = Severity(h.sig.severity) if h.sig.severity else entry.severity
        detail = render(h.sig.detail, values)
        fix = library_install_steps(values, self.facts) + render_all(list(h.sig.fix) + list(values.get("_fix", ())),
                                                                     values)
        evidence: Dict[str, Any] = {
            "source": "log",
            "signature": h.sig.id,
            "signatures": list(h.signatures),
            "line": h.first_line,
            "lines": list(h.lines),
            "count": h.count,
            "text": h.text,
        }
        evidence.update({k: v for k, v in h.values.items() if not k.startswith("_") and not k.startswith("err_m")})
        evidence.update({f"all_{k}": v for k, v in h.seen.items() if len(v) > 1})
        for k in ("driver_version", "driver_cuda", "torch_version", "tf_version", "compute_capability"):
            if k in self.facts and k not in evidence:
                evidence[k] = self.facts[k]
        return make_finding(h.code, first(detail, entry.meaning), evidence=evidence, fix=fix or [entry.remedy],
                            title=render(h.sig.title, values) or None, severity=severity)


def _link_causes(findings: List[Finding], hits: List[Hit]) -> List[Finding]:
    """Set caused_by where a message is a symptom of another finding in the same log."""
    errors = [f for f in findings if f.severity == Severity.ERROR and f.code != "not-environment"]
    out = []
    for f, h in zip(findings, hits):
        wanted = list(h.sig.symptom_of)
        if h.sig.id == "cuda-error-table":
            wanted = list(DRIVER_CAUSES)
        cause = None
        if h.sig.id == "cuda-error-table":  # a line a specific signature also read: that reading is the cause
            cause = next((e for e, eh in zip(findings, hits) if e.severity == Severity.ERROR and e.code != f.code
                          and eh.sig.id not in GENERIC_SIGNATURES and set(h.lines) <= set(eh.lines)), None)
        for code in [c for c in wanted if c != "lower"] if cause is None else []:
            cause = next((e for e in errors if e.code == code and e.code != f.code), None)
            if cause:
                break
        if cause is None and "lower" in wanted:
            lower = [e for e in errors if e.layer.depth < f.layer.depth and e.code != f.code]
            cause = min(lower, key=lambda e: e.layer.depth, default=None)
        if cause is not None:
            f = Finding(f.code, f.severity, f.layer, f.title, f.detail, f.evidence, f.fix, cause.code)
        out.append(f)
    return out


def _group(f: Finding) -> int:
    if f.severity == Severity.ERROR:
        return 0
    if f.code == "not-environment":  # the answer for the log, ahead of side warnings
        return 1
    return 2 if f.severity == Severity.WARNING else 3


def rank(findings: List[Finding]) -> List[Finding]:
    """Root causes first: errors, then a not-environment answer, then warnings and info;
    within a group the lowest layer first; a symptom after every root cause."""
    return sorted(findings, key=lambda f: (f.caused_by is not None, _group(f), f.layer.depth,
                                           f.evidence.get("line", 0)))
