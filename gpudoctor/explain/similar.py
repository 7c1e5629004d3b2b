"""The last resort of `explain`: when no line of a failing log names a cause, the known reports it
reads most like.

The signatures name a cause when a line says it. Many real pastes never do: a `docker run` command
and "no GPU found", a WSL prompt and a bare `is_available() False`. For those, the wording of the
whole log still points somewhere: logs of one class of failure share their vocabulary (docker and
--gpus, wsl and /usr/lib/wsl, sm_37 and K80). The memory is the training corpus
(tests/explain/corpus, written to known_reports.json by tools/build_known_reports.py): each report
is its confirmed cause, its thread and the words it shares with at least one other report, so
that what is learned is a class's vocabulary, never one report's wording.

The answer is a warning, not an error: it is a likely cause, given with the threads it resembles,
and only for a log that shows a failure no line explained. A healthy log is left alone.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple

from ..codes import CATALOG, make_finding
from ..model import Finding, Severity

MEMORY = Path(__file__).resolve().parent / "known_reports.json"
NEIGHBOURS = 5  # reports that vote, each with its similarity
MIN_SIMILARITY = 0.1  # below this the nearest report shares only everyday words
MAX_FAILURE_LINES = 200  # lines examined for a failure no signature explains
CUE_WORDS = 8  # shared words shown as the reason

TOKEN_RE = re.compile(r"[a-z][a-z0-9_+.\-]{1,30}")
# A host name (download.example.org) says where a file came from, not what failed; the memory
# keeps no host names at all.
HOST_RE = re.compile(r"(?:[a-z0-9-]+\.)+(?:org|com|net|io|dev|ai|cn)")
# A line that says something failed. The answer is only given for a log that has one which no
# signature explains: a log of harmless warnings alone is healthy whatever it resembles.
FAILURE_RE = re.compile(
    r"traceback \(most recent|error|exception|failed|failure|cannot|can't|unable to|could not|couldn't"
    r"|not found|no such file|not available|not detected|no cuda|invalid|denied"
    r"|unsupported|not supported|not compatible|mismatch|segmentation fault|core dumped|killed"
    # False only as an answer about the GPU, or alone as the REPL's answer (collect_env and xformers.info print
    # many harmless False values: 'Is debug build: False', 'is_functorch_available: False')
    r"|(?:(?:cuda|gpu)[^\n]{0,40}?available|detected|is_built_with_cuda|is_gpu_available)\W*(?:returns?\s+)?false\b"
    r"|^\s*false\s*$"
    r"|(?:returns?|prints?|gives?|shows?|outputs?|->|=>|\bis)\s*[`'\"]?false\b",
    re.IGNORECASE)
# Placeholders that only say a tool could not look (collect_env's "Could not collect"), and lines that say
# themselves that they are no error (TensorFlow's "Executor start aborting (this does not indicate an error ...").
# (a training metric such as "Minibatch error: 85.9%" is a number the program prints, not a failure)
# (nor is a reporter's sentence that the program runs despite a message: "appears to run in spite of this error")
NOT_A_FAILURE_RE = re.compile(r"could not collect|does not indicate an error|you can (?:safely )?ignore this"
                              r"|\b(?:in spite of|despite)\b[^.]*\b(?:error|warning|message)"
                              r"|\b(?:does not|doesn't|did not|didn't) (?:impact|affect) (?:usage|the (?:run|result|training))"
                              r"|\b(?:minibatch|batch|validation|val|test|train(?:ing)?|eval|top-?\d)[ _]error(?: rate)?"
                              r"\s*[:=]\s*[\d.]+\s*%?"
                              # "Is the below output an issue ...?": the reporter asks whether the lines below matter
                              r"|^\s*(?:is|are|should|can|could|does|do)\b[^:]*\b(?:issue|problem|error|warning)s?\b[^:]*\?\s*$",
                              re.IGNORECASE)
# A reporter's sentence that announces an error pasted elsewhere ("When I run it, I get the following error:")
# names no failure itself: only a line that carries the message does.
ANNOUNCES_AN_ERROR_RE = re.compile(
    r"^(?=.*\b(?:I|we|I'm|I've|we're|we've)\b)[^:]*\b(?:error|errors|exception|traceback|message)\b[^:]*:?\s*$"
    # "and got the error :", "getting this error:" with no subject: the sentence leads into the error, is not one
    r"|^[^:]{0,40}\b(?:got|get|gets|getting|see|saw|seeing|receive[ds]?|receiving|encounter(?:ed|ing)?|obtain(?:ed)?)"
    r"\b[^:]*\b(?:error|errors|exception|traceback|message)\b\s*:?\s*$",
    re.IGNORECASE)
# ... and only for a log about the GPU stack: a failing web request resembles nothing here.
GPU_STACK_RE = re.compile(r"cuda|gpu|nvidia|cudnn|cublas|nccl|nvcc|nvml|libcu|torch|tensorflow|jax|xla|tensorrt",
                          re.IGNORECASE)


def tokens(text: str) -> FrozenSet[str]:
    """The distinct words of a text as the memory stores them (lowercase, versions and sonames kept whole)."""
    found = set()
    for token in TOKEN_RE.findall(text.lower()):
        token = token.strip(".-+")
        if len(token) >= 2 and not HOST_RE.fullmatch(token):
            found.add(token)
    return frozenset(found)


@dataclass(frozen=True)
class KnownReport:
    code: str  # the thread's confirmed root cause; "" for a healthy log
    source: str
    words: FrozenSet[str]


@dataclass(frozen=True)
class Neighbour:
    report: KnownReport
    similarity: float
    shared: Tuple[str, ...]  # the most telling words both logs use


class Memory:
    """Known reports as tf-idf vectors (binary term frequency), searched through an inverted index."""

    def __init__(self, reports: List[KnownReport]) -> None:
        self.reports = reports
        df: Counter = Counter()
        for report in reports:
            df.update(report.words)
        n = max(len(reports), 1)
        self.idf = {word: math.log(n / count) for word, count in df.items()}
        self.norms = [math.sqrt(sum(self.idf[w] ** 2 for w in r.words)) or 1.0 for r in reports]
        self.index: Dict[str, List[int]] = {}
        for i, report in enumerate(reports):
            for word in report.words:
                self.index.setdefault(word, []).append(i)

    def without(self, source: str) -> "Memory":
        """The memory less one thread's report: a corpus case is measured as if it were new."""
        return Memory([r for r in self.reports if r.source != source])

    def nearest(self, words: Iterable[str], k: int = NEIGHBOURS) -> List[Neighbour]:
        known = [w for w in set(words) if w in self.idf]
        norm = math.sqrt(sum(self.idf[w] ** 2 for w in known)) or 1.0
        dots: Dict[int, float] = {}
        for word in known:
            weight = self.idf[word] ** 2
            for i in self.index[word]:
                dots[i] = dots.get(i, 0.0) + weight
        best = sorted(dots.items(), key=lambda item: (-item[1] / self.norms[item[0]], item[0]))[:k]
        out = []
        for i, dot in best:
            report = self.reports[i]
            shared = sorted(report.words.intersection(known), key=lambda w: (-self.idf[w], w))[:CUE_WORDS]
            out.append(Neighbour(report, dot / (norm * self.norms[i]), tuple(shared)))
        return out


@lru_cache(maxsize=1)
def load_memory() -> Memory:
    with open(MEMORY, encoding="utf-8") as handle:
        data = json.load(handle)
    return Memory([KnownReport(r["code"], r["source"], frozenset(r["words"])) for r in data["reports"]])


def vote(neighbours: List[Neighbour]) -> Tuple[str, List[Neighbour]]:
    """The cause the neighbours give most weight, and those that gave it (most similar first)."""
    weights: Counter = Counter()
    for n in neighbours:
        weights[n.report.code] += n.similarity
    if not weights:
        return "", []
    code = max(weights, key=lambda c: (weights[c], -min(i for i, n in enumerate(neighbours) if n.report.code == c)))
    return code, [n for n in neighbours if n.report.code == code]


def names_a_problem(finding: Finding) -> bool:
    """An error or warning, or the answer that the problem is in the program itself."""
    return finding.severity in (Severity.ERROR, Severity.WARNING) or finding.code == "not-environment"


def unexplained_failure(text: str, explained: Callable[[str], bool]) -> Optional[str]:
    """The first line that says something failed and that no signature reads (harmless or not)."""
    examined = 0
    for line in text.splitlines():
        if FAILURE_RE.search(line) and not NOT_A_FAILURE_RE.search(line) and not ANNOUNCES_AN_ERROR_RE.search(line):
            if not explained(line):
                return line.strip()
            examined += 1
            if examined >= MAX_FAILURE_LINES:
                break
    return None


def likely_cause(text: str, explained: Callable[[str], bool], memory: Optional[Memory] = None) -> Optional[Finding]:
    """A warning naming the cause of the known reports this failing log reads most like, or None."""
    failure = unexplained_failure(text, explained) if GPU_STACK_RE.search(text) else None
    if failure is None:
        return None
    if memory is None:
        try:
            memory = load_memory()
        except (OSError, ValueError, KeyError):  # a damaged install: no guess rather than a traceback
            return None
    neighbours = memory.nearest(tokens(text))
    if not neighbours or neighbours[0].similarity < MIN_SIMILARITY:
        return None
    code, voters = vote(neighbours)
    if not code or code not in CATALOG:  # most alike are healthy logs, or a code no longer known
        return None
    entry = CATALOG[code]
    cues = []
    for n in voters:  # shown as the reason: words a reader recognises, not masks such as "xxx"
        cues += [w for w in n.shared if w not in cues and len(w) >= 3 and len(set(w)) > 1]
    severity = Severity.WARNING if entry.severity == Severity.ERROR else entry.severity
    threads = "; ".join(n.report.source for n in voters[:3])
    detail = (f"No line of this log names a cause gpudoctor knows, but it fails (\"{failure[:160]}\"), and it reads "
              f"most like {len(voters)} known report(s) whose confirmed cause was: {entry.meaning} "
              f"Shared words: {', '.join(cues[:CUE_WORDS])}. Similar threads: {threads}")
    evidence = {
        "source": "log",
        "inferred_from": "similar known reports",
        "text": failure[:400],
        "similar_reports": [{"source": n.report.source, "code": n.report.code, "similarity": round(n.similarity, 3)}
                            for n in neighbours],
        "shared_words": cues[:CUE_WORDS],
    }
    fix = [entry.remedy, "Run `gpudoctor check` on the machine that printed this log: it examines the cause directly."]
    return make_finding(code, detail, evidence=evidence, fix=fix, title=f"Likely: {entry.title}", severity=severity)
