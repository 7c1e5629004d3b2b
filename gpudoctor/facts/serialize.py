"""Facts are dataclasses in memory and plain JSON on the wire; these two functions convert.

`from_json` lets saved reports (and the real-GPU fixtures in tests/) be fed back to the rules.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from enum import Enum
from typing import Any, Dict, Type, TypeVar

T = TypeVar("T")


def to_json(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, dict):
        return {str(k): to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_json(v) for v in obj]
    return obj


def _hints(cls: type) -> Dict[str, Any]:
    module = sys.modules.get(cls.__module__)
    return typing.get_type_hints(cls, vars(module) if module else None)


def from_json(cls: Type[T], data: Any) -> T:
    """Rebuild `cls` from JSON data, tolerating missing (defaulted) and unknown keys."""
    return _convert(cls, data)


def _convert(tp: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union:
        non_none = [a for a in args if a is not type(None)]
        return _convert(non_none[0], data) if len(non_none) == 1 else data
    if origin in (list, typing.List, tuple, typing.Tuple):
        inner = args[0] if args else Any
        return [_convert(inner, v) for v in data]
    if origin in (dict, typing.Dict):
        inner = args[1] if len(args) == 2 else Any
        return {k: _convert(inner, v) for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        kwargs = {f.name: _convert(hints.get(f.name, Any), data[f.name])
                  for f in dataclasses.fields(tp) if f.init and f.name in data}
        return tp(**kwargs)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(data)
    return data
