"""Load the signature catalogue (signatures/*.toml, sonames.toml, cuda_errors.toml).

The knowledge lives in the TOML files next to this module; this module only reads them,
compiles the regular expressions once, and offers the small lookups (soname family, CUDA
error) that signatures refer to with "@soname" and "@cuda_error".
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Pattern, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older Pythons only
    import tomli as tomllib

from ..codes import CATALOG

DATA_DIR = Path(__file__).resolve().parent
KINDS = ("finding", "fact", "benign")


@dataclass(frozen=True)
class Signature:
    id: str
    kind: str
    keywords: Tuple[str, ...]
    regex: Pattern[str]
    code: str = ""
    severity: Optional[str] = None
    subject: str = ""
    title: str = ""
    detail: str = ""
    fix: Tuple[str, ...] = ()
    symptom_of: Tuple[str, ...] = ()
    enrich: Tuple[str, ...] = ()
    meaning: str = ""
    example: str = ""
    source: str = ""
    requires: Tuple[Tuple[str, str], ...] = ()  # (matched error text, word that must be on the line)
    collect: bool = False  # a fact seen many times (libraries that loaded): keep every value, not the first


@dataclass(frozen=True)
class SonameFamily:
    pattern: Pattern[str]
    component: str
    code: str
    version_is: str
    optional: bool
    fix: Tuple[str, ...]
    library: str = ""  # the component key of gpudoctor.fixes (cudart, cublas, cudnn, ...); "{lib}" from the match


@dataclass(frozen=True)
class CudaError:
    number: int
    driver_name: str
    runtime_name: str
    message: str
    code: str
    meaning: str
    fix: Tuple[str, ...]
    requires: str = ""  # a word that must also be on the line (for generic messages)
    not_followed_by: str = ""  # a regex the message must not be followed by (another error's number)
    wordings: Tuple[str, ...] = ()  # the message as other CUDA releases word it

    @property
    def keys(self) -> Tuple[str, ...]:
        return tuple(k for k in (self.driver_name, self.runtime_name, self.message, *self.wordings) if k)

    @property
    def names(self) -> str:
        return " / ".join(n for n in (self.driver_name, self.runtime_name) if n)


@dataclass(frozen=True)
class Catalogue:
    signatures: Tuple[Signature, ...]
    sonames: Tuple[SonameFamily, ...]
    cuda_errors: Tuple[CudaError, ...]
    by_keyword: Dict[str, Tuple[Signature, ...]] = field(default_factory=dict)

    def soname_family(self, soname: str) -> Optional[SonameFamily]:
        for fam in self.sonames:
            if fam.pattern.search(soname):
                return fam
        return None

    def cuda_error(self, text: str) -> Optional[CudaError]:
        low = text.lower()
        for err in self.cuda_errors:
            for key in err.keys:
                if key.lower() == low:
                    return err
        return None


def _load(name: str) -> Dict[str, Any]:
    with open(DATA_DIR / name, "rb") as fh:
        return tomllib.load(fh)


def signature_files() -> List[Path]:
    """The signature tables, in name order: earlier files hold the more specific signatures
    (a class of failures keeps its own file, so each can grow without touching the others)."""
    return sorted((DATA_DIR / "signatures").glob("*.toml"))


def _cuda_error_signature(template: Dict[str, Any], errors: List[CudaError]) -> Signature:
    """Expand the "@cuda_errors" signature into one regex over every name and message."""
    alternatives, keywords, requires = [], set(), []
    for err in errors:
        for key in err.keys:
            guard = "(?!%s)" % err.not_followed_by if err.not_followed_by and key == err.message else ""
            alternatives.append(re.escape(key) + guard)
            keywords.add(key.lower())
            if err.requires and key == err.message:
                requires.append((key.lower(), err.requires))
    alternatives.sort(key=len, reverse=True)  # longest first: a message wins over a prefix
    # advice that names an error ("If you get `CUDA error: invalid device function` errors, ...") is not that error
    not_advice = r"^(?:(?!\b(?:if|when) you (?:get|see|encounter|run into|hit)\b).)*?"
    regex = re.compile(r"%s(?P<err>%s)" % (not_advice, "|".join(alternatives)), re.IGNORECASE)
    return _signature(dict(template, keywords=sorted(keywords)), regex, tuple(requires))


def _signature(entry: Dict[str, Any], regex: Pattern[str], requires: Tuple[Tuple[str, str], ...] = ()) -> Signature:
    kind = entry.get("kind", "finding")
    if kind not in KINDS:
        raise ValueError(f"signature {entry['id']}: unknown kind {kind!r}")
    code = entry.get("code", "")
    if kind == "finding" and not code.startswith("@") and code not in CATALOG:
        raise ValueError(f"signature {entry['id']}: code {code!r} is not in gpudoctor.codes")
    keywords = tuple(k.lower() for k in entry["keywords"])
    if not keywords:
        raise ValueError(f"signature {entry['id']}: needs at least one keyword")
    return Signature(
        id=entry["id"], kind=kind, keywords=keywords, regex=regex, code=code,
        severity=entry.get("severity"), subject=entry.get("subject", ""),
        title=entry.get("title", ""), detail=entry.get("detail", ""),
        fix=tuple(entry.get("fix", ())), symptom_of=tuple(entry.get("symptom_of", ())),
        enrich=tuple(entry.get("enrich", ())), meaning=entry.get("meaning", ""),
        example=entry.get("example", ""), source=entry.get("source", ""), requires=requires,
        collect=bool(entry.get("collect", False)),
    )


@lru_cache(maxsize=1)
def load_catalogue() -> Catalogue:
    errors = [
        CudaError(number=e["number"], driver_name=e.get("driver_name", ""), runtime_name=e.get("runtime_name", ""),
                  message=e["message"], code=e["code"], meaning=e["meaning"], fix=tuple(e.get("fix", ())),
                  requires=e.get("requires", ""), not_followed_by=e.get("not_followed_by", ""),
                  wordings=tuple(e.get("wordings", ())))
        for e in _load("cuda_errors.toml")["error"]
    ]
    for err in errors:
        if err.code not in CATALOG:
            raise ValueError(f"CUDA error {err.number}: code {err.code!r} is not in gpudoctor.codes")
    sonames = tuple(
        SonameFamily(pattern=re.compile(s["pattern"]), component=s["component"], code=s["code"],
                     version_is=s.get("version_is", "none"), optional=bool(s.get("optional", False)),
                     fix=tuple(s.get("fix", ())), library=s.get("library", ""))
        for s in _load("sonames.toml")["soname"]
    )
    signatures = []
    entries = [e for path in signature_files() for e in _load(str(path))["signature"]]
    for entry in entries:
        if entry["regex"] == "@cuda_errors":
            signatures.append(_cuda_error_signature(entry, errors))
        else:
            signatures.append(_signature(entry, re.compile(entry["regex"], re.IGNORECASE)))
    ids = [s.id for s in signatures]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate signature ids")
    by_keyword: Dict[str, List[Signature]] = {}
    for sig in signatures:
        for kw in sig.keywords:
            by_keyword.setdefault(kw, []).append(sig)
    return Catalogue(
        signatures=tuple(signatures), sonames=sonames, cuda_errors=tuple(errors),
        by_keyword={k: tuple(v) for k, v in by_keyword.items()},
    )
