"""Parse CUDA_VISIBLE_DEVICES the way the CUDA driver does.

The rules, as the driver applies them and as PyTorch reproduces them for its NVML-based device
count (pytorch/pytorch torch/cuda/__init__.py, `_parse_visible_devices` and
`_transform_uuid_to_ordinals`; PR #84879 notes the driver reads each entry like strtoul):
- unset: every GPU is visible; set but empty: none is;
- entries are separated by commas; each is read like strtoul, so "1gpu2" means 1;
- a negative or non-numeric entry ends the list: "0,2,-1,1" is "0,2";
- the first index that is not a GPU ends the list: "5" on a 4-GPU machine hides every GPU;
- a list that starts with "GPU-" (or "MIG-") is a list of UUIDs; each entry must carry that
  prefix and may be any unique prefix of a UUID; an unknown or ambiguous one ends the list;
- a repeated device hides every GPU.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from ..facts.visibility import VisibleEntry

_UUID_PREFIXES = ("GPU-", "MIG-")


def strtoul_prefix(text: str) -> int:
    """The leading integer of `text` as CUDA reads it; -1 when there is none or it is negative."""
    digits = ""
    for i, ch in enumerate(text):
        if ch.isdigit() and ch.isascii():
            digits += ch
        elif i == 0 and ch in "+-":
            digits += ch
        else:
            break
    try:
        return int(digits)
    except ValueError:
        return -1


def parse_visible_devices(value: Optional[str], uuids: Sequence[Optional[str]],
                          device_count: Optional[int]) -> Tuple[List[VisibleEntry], Optional[List[int]], Optional[str], List[str]]:
    """(entries, selected ordinals or None when unrestricted, first invalid entry, duplicates).

    Ordinals index the driver's enumeration order; `uuids` and `device_count` describe it
    (device_count None: unknown, every non-negative index is accepted).
    """
    if value is None:
        return [], None, None, []
    if value.strip() == "":
        return [], [], None, []
    if value.startswith(_UUID_PREFIXES):
        return _parse_uuid_list(value, uuids)
    return _parse_index_list(value, device_count)


def _parse_index_list(value: str, device_count: Optional[int]):
    entries: List[VisibleEntry] = []
    selected: List[int] = []
    for raw in value.split(","):
        index = strtoul_prefix(raw.strip())
        if index < 0:
            entries.append(VisibleEntry(raw, "invalid", False, "not a device index: CUDA stops reading here"))
            return entries, selected, raw, []
        if index in selected:
            entries.append(VisibleEntry(raw, "index", False, "repeated device: CUDA then shows no GPU at all"))
            return entries, [], None, [raw]
        if device_count is not None and index >= device_count:
            entries.append(VisibleEntry(raw, "index", False,
                                        f"there is no GPU {index} (this machine has {device_count}): CUDA stops reading here"))
            return entries, selected, raw, []
        entries.append(VisibleEntry(raw, "index", True))
        selected.append(index)
    return entries, selected, None, []


def _parse_uuid_list(value: str, uuids: Sequence[Optional[str]]):
    prefix = value[:4]
    entries: List[VisibleEntry] = []
    selected: List[int] = []
    seen: List[str] = []
    known = [u or "" for u in uuids]
    for raw in value.split(","):
        if raw in seen:
            entries.append(VisibleEntry(raw, "uuid", False, "repeated device: CUDA then shows no GPU at all"))
            return entries, [], None, [raw]
        if not raw.startswith(prefix):
            entries.append(VisibleEntry(raw, "invalid", False, f"not a {prefix} id: CUDA stops reading here"))
            return entries, selected, raw, []
        seen.append(raw)
        if prefix == "MIG-" or not known:
            entries.append(VisibleEntry(raw, "mig" if prefix == "MIG-" else "uuid", True))
            continue
        matches = [i for i, u in enumerate(known) if u.startswith(raw)]
        if len(matches) != 1:
            why = "matches no GPU" if not matches else "matches several GPUs"
            entries.append(VisibleEntry(raw, "uuid", False, f"{why}: CUDA stops reading here"))
            return entries, selected, raw, []
        if matches[0] in selected:
            entries.append(VisibleEntry(raw, "uuid", False, "repeated device: CUDA then shows no GPU at all"))
            return entries, [], None, [raw]
        entries.append(VisibleEntry(raw, "uuid", True))
        selected.append(matches[0])
    if prefix == "MIG-" or not known:
        return entries, None, None, []  # MIG instances (or unknown UUIDs) cannot be resolved to GPUs here
    return entries, selected, None, []
