"""`fleet reports`: saved `check --json` files (or `gpudoctor report` files), from any launcher.

A node is named by its file name without the extension (`node17.json` -> `node17`), which is how
the docs' pdsh, Ansible and Kubernetes recipes save them. Files are read one at a time.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from itertools import chain, islice
from typing import Iterable, Iterator, List, Optional, Sequence

from ..saved_report import SavedReportError, load_saved_report
from .aggregate import NodeAnswer, NodeRecord, Reducer

REPORT_SUFFIXES = (".json", ".md")
PARALLEL_FROM = 500  # files; fewer are read in this process (worker start-up would cost more)
MAX_WORKERS = 4
CHUNK = 100  # files a worker reduces per round trip


def report_files(paths: Sequence[str]) -> Iterator[str]:
    """The files named, and the *.json files in the folders named (sorted, not recursive; a
    `gpudoctor report` Markdown file is read when named, a folder's other files are left alone)."""
    for path in paths:
        if os.path.isdir(path):
            names = sorted(e.name for e in os.scandir(path) if e.name.endswith(".json") and e.is_file())
            for name in names:
                yield os.path.join(path, name)
        else:  # a file (one that vanished since check_paths is that node's read error)
            yield path


def check_paths(paths: Sequence[str]) -> List[str]:
    """The paths that do not exist (checked before any file is read, so a typo is a usage error)."""
    return [p for p in paths if not os.path.exists(p)]


def node_name(path: str) -> str:
    base = os.path.basename(path)
    for suffix in REPORT_SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def read_report(path: str) -> NodeAnswer:
    try:
        return NodeAnswer(node_name(path), load_saved_report(path))
    except SavedReportError as exc:
        return NodeAnswer(node_name(path), error=str(exc))


def read_reports(paths: Sequence[str]) -> Iterator[NodeRecord]:
    """The reports reduced to records, in file order. Parsing JSON is most of the cost, so a big
    fleet is read by a few worker processes, each reducing a chunk of files at a time."""
    files = report_files(paths)
    first = list(islice(files, PARALLEL_FROM))
    workers = min(MAX_WORKERS, os.cpu_count() or 1)
    if len(first) < PARALLEL_FROM or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        reducer = Reducer()
        for path in chain(first, files):
            yield reducer.reduce(read_report(path))
        return
    chunks = _chunks(chain(first, files), CHUNK)
    # fork: the workers start in milliseconds with gpudoctor already imported
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        for records in pool.map(_reduce_chunk, chunks):
            yield from records


_worker_reducer: Optional[Reducer] = None


def _reduce_chunk(paths: List[str]) -> List[NodeRecord]:
    global _worker_reducer
    if _worker_reducer is None:  # one per worker process: it sends each group's stack once
        _worker_reducer = Reducer()
    return [_worker_reducer.reduce(read_report(p)) for p in paths]


def _chunks(items: Iterable[str], size: int) -> Iterator[List[str]]:
    it = iter(items)
    while True:
        chunk = list(islice(it, size))
        if not chunk:
            return
        yield chunk
