"""The package index's JSON metadata for one project: its releases and their files (name, size,
sha256, URL). Standard library only. The index's address is the one pip uses (taken from pip's own
default at run time, or --index-json), never written here."""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

_FINAL = re.compile(r"^\d+(\.\d+)*$")  # final releases only: no rc, dev, post or local tags


def default_json_base() -> str:
    """The JSON API base of pip's default index (e.g. '<index>/pypi'), read from pip itself."""
    try:
        from pip._internal.models.index import PyPI  # type: ignore
    except ImportError as exc:  # pragma: no cover - pip is in every venv this script runs in
        raise SystemExit("pip is not importable: pass --index-json BASE (the index's JSON API base)") from exc
    return PyPI.pypi_url


@dataclass(frozen=True)
class WheelFile:
    filename: str
    url: str
    size: int
    sha256: str
    upload_time: str = ""


def fetch_project(base: str, name: str, opener: Callable[..., Any] = urllib.request.urlopen,
                  timeout: float = 60.0) -> Dict[str, Any]:
    url = f"{base.rstrip('/')}/{name}/json"
    with opener(url, timeout=timeout) as resp:
        raw = resp.read()
    doc = json.loads(raw.decode("utf-8"))
    doc["_url"] = url
    doc["_bytes"] = len(raw)  # file URLs may be relative to the document
    return doc


def final_releases(doc: Dict[str, Any]) -> Dict[str, List[WheelFile]]:
    """Final releases with at least one wheel that is not yanked, each with its wheels."""
    base = doc.get("_url", "")
    out: Dict[str, List[WheelFile]] = {}
    for version, files in (doc.get("releases") or {}).items():
        if not _FINAL.match(version):
            continue
        wheels = [WheelFile(f["filename"], urllib.parse.urljoin(base, f["url"]), int(f.get("size") or 0),
                            (f.get("digests") or {}).get("sha256", ""), (f.get("upload_time") or "")[:10])
                  for f in files if f.get("filename", "").endswith(".whl") and not f.get("yanked")]
        if wheels:
            out[version] = wheels
    return out


def vkey(version: str):
    return tuple(int(p) for p in version.split("."))


def linux_x86_64_wheel(wheels: List[WheelFile], python_tag: str = "cp312") -> Optional[WheelFile]:
    """The wheel a Linux x86_64 user gets: for `python_tag` when the release has one, else the
    newest CPython's, else a pure-Python wheel."""
    linux = [w for w in wheels if "linux" in w.filename and "x86_64" in w.filename]
    exact = [w for w in linux if f"-{python_tag}-{python_tag}-" in w.filename]
    if exact:
        return exact[0]
    if linux:
        return sorted(linux, key=lambda w: w.filename)[-1]
    pure = [w for w in wheels if w.filename.endswith("-none-any.whl")]
    return pure[0] if pure else None


def python_versions(wheels: List[WheelFile]) -> List[str]:
    """CPython versions with a Linux x86_64 wheel ("cp312" -> "3.12"); free-threaded (cp314t) left out."""
    found = set()
    for w in wheels:
        if "linux" not in w.filename or "x86_64" not in w.filename:
            continue
        m = re.search(r"-cp(\d)(\d+)-cp\d+(t?)-", w.filename)
        if m and not m.group(3):
            found.add(f"{m.group(1)}.{m.group(2)}")
    return sorted(found, key=vkey)
