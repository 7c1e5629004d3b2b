"""The thin adapter conda loads, exercised against a stand-in `conda` package (conda is not on PyPI)."""

from __future__ import annotations

import dataclasses
import importlib
import re
import sys
import types
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "gpudoctor"


def fake_conda(monkeypatch, with_summary: bool, context: Any) -> None:
    if with_summary:
        @dataclasses.dataclass
        class CondaHealthCheck:
            name: str
            action: Callable
            fixer: Optional[Callable] = None
            summary: Optional[str] = None
            fix: Optional[str] = None
    else:  # conda 23.11 - 24.x: a NamedTuple without summary
        class CondaHealthCheck(NamedTuple):  # type: ignore[no-redef]
            name: str
            action: Callable

    @dataclasses.dataclass
    class CondaPostCommand:
        name: str
        action: Callable
        run_for: set

    @dataclasses.dataclass
    class CondaSetting:
        name: str
        description: str
        parameter: Any
        aliases: tuple = ()

    conda = types.ModuleType("conda")
    plugins = types.ModuleType("conda.plugins")
    plugins.hookimpl = lambda f: f
    plugins.types = types.SimpleNamespace(CondaHealthCheck=CondaHealthCheck, CondaPostCommand=CondaPostCommand,
                                          CondaSetting=CondaSetting)
    base = types.ModuleType("conda.base")
    ctx_mod = types.ModuleType("conda.base.context")
    ctx_mod.context = context
    constants = types.ModuleType("conda.base.constants")
    constants.OK_MARK, constants.X_MARK = "OK", "X"
    common = types.ModuleType("conda.common")
    configuration = types.ModuleType("conda.common.configuration")
    configuration.PrimitiveParameter = lambda default, element_type=None: ("param", default, element_type)
    conda.plugins = plugins
    for name, mod in {"conda": conda, "conda.plugins": plugins, "conda.base": base, "conda.base.context": ctx_mod,
                      "conda.base.constants": constants, "conda.common": common,
                      "conda.common.configuration": configuration}.items():
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.delitem(sys.modules, "gpudoctor.conda_plugin.plugin", raising=False)


class BrokenContext:
    @property
    def target_prefix(self):
        raise RuntimeError("conda context exploded")


@pytest.mark.parametrize("with_summary", [True, False])
def test_registers_the_three_hooks_on_old_and_new_conda(monkeypatch, with_summary):
    fake_conda(monkeypatch, with_summary, types.SimpleNamespace())
    plugin = importlib.import_module("gpudoctor.conda_plugin.plugin")
    (post,) = list(plugin.conda_post_commands())
    assert post.run_for == {"install", "create", "update", "remove", "env_create", "env_update"}
    (check,) = list(plugin.conda_health_checks())
    assert check.name == "gpudoctor"
    assert (getattr(check, "summary", None) is not None) == with_summary
    (setting,) = list(plugin.conda_settings())
    assert setting.name == "gpudoctor_hook" and setting.parameter == ("param", True, bool)


def test_post_command_never_raises_when_conda_context_fails(monkeypatch):
    fake_conda(monkeypatch, True, BrokenContext())
    plugin = importlib.import_module("gpudoctor.conda_plugin.plugin")
    (post,) = list(plugin.conda_post_commands())
    post.action("install")  # no exception


def test_post_command_reads_prefix_and_setting_from_conda(monkeypatch, tmp_path):
    context = types.SimpleNamespace(target_prefix=str(tmp_path), json=False, quiet=False, dry_run=False,
                                    plugins=types.SimpleNamespace(gpudoctor_hook=False))
    fake_conda(monkeypatch, True, context)
    plugin = importlib.import_module("gpudoctor.conda_plugin.plugin")
    seen = []
    monkeypatch.setattr(plugin.hook, "post_command", lambda ctx: seen.append(ctx))
    plugin._post_command("install")
    assert seen[0].prefix == str(tmp_path) and seen[0].setting is False and seen[0].command == "install"


def test_only_the_plugin_module_imports_conda():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).as_posix() == "conda_plugin/plugin.py":
            continue
        if re.search(r"^\s*(?:import conda\b|from conda\b)", path.read_text(), re.MULTILINE):
            offenders.append(str(path))
    assert offenders == []
