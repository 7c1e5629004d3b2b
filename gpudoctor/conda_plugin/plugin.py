"""The adapter conda loads (entry point group `conda`): hooks in, plain gpudoctor functions out.

The only module that imports conda. It reads what the logic needs from conda's context and
hands it to `hook.py`; a conda too old for a hook simply never calls it.
- conda_post_commands: conda >= 23.7
- conda_health_checks: conda >= 23.11 (`summary` passed only where CondaHealthCheck has it)
- conda_settings: conda >= 24.3 (`plugins: {gpudoctor_hook: false}` in .condarc, or
  CONDA_PLUGINS_GPUDOCTOR_HOOK=false)
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Iterable, Optional

from conda import plugins

from . import hook


def _setting() -> Optional[bool]:
    try:
        from conda.base.context import context

        value = getattr(context.plugins, hook.SETTING_NAME)
    except Exception:  # conda without settings, or the setting not registered
        return None
    return bool(value) if value is not None else None


def _post_command(command: str) -> None:
    try:
        from conda.base.context import context

        ctx = hook.Context(command=command, prefix=str(context.target_prefix), setting=_setting(),
                           json_mode=bool(getattr(context, "json", False)), quiet=bool(getattr(context, "quiet", False)),
                           dry_run=bool(getattr(context, "dry_run", False)))
    except BaseException:  # noqa: B036 - never turn a successful conda command into a failure
        return
    hook.post_command(ctx)


def _health_check(prefix: str, verbose: bool) -> None:
    try:
        from conda.base.constants import OK_MARK, X_MARK
    except Exception:
        OK_MARK, X_MARK = "✅", "❌"
    hook.health_check(prefix, verbose, ok_mark=OK_MARK, x_mark=X_MARK)


@plugins.hookimpl
def conda_post_commands() -> Iterable[Any]:
    yield plugins.types.CondaPostCommand(name="gpudoctor-quick-check", action=_post_command,
                                         run_for=set(hook.TRIGGER_COMMANDS))


def _field_names(kind: Any) -> "set[str]":
    """Fields of a conda plugin type: a NamedTuple before conda 24.x, a dataclass after."""
    if dataclasses.is_dataclass(kind):
        return {f.name for f in dataclasses.fields(kind)}
    return set(getattr(kind, "_fields", ()))


@plugins.hookimpl
def conda_health_checks() -> Iterable[Any]:
    kind = plugins.types.CondaHealthCheck
    kwargs: Dict[str, Any] = {"name": "gpudoctor", "action": _health_check}
    if "summary" in _field_names(kind):
        kwargs["summary"] = "Check that the environment's GPU stack (driver, CUDA, cuDNN, frameworks) fits together"
    yield kind(**kwargs)


@plugins.hookimpl
def conda_settings() -> Iterable[Any]:
    from conda.common.configuration import PrimitiveParameter

    yield plugins.types.CondaSetting(
        name=hook.SETTING_NAME,
        description="Run gpudoctor's quick GPU check after conda install/create/update/remove "
                    "(also off with GPUDOCTOR_CONDA_HOOK=0).",
        parameter=PrimitiveParameter(True, element_type=bool),
    )
