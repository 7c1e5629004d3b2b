"""Children run on the TARGET interpreter, possibly old: stdlib-only and Python 3.6 syntax."""

from __future__ import annotations

import ast
import os
import sys

import pytest

from gpudoctor.probes.runner import CHILDREN_DIR

CHILDREN = sorted(n for n in os.listdir(CHILDREN_DIR) if n.endswith(".py") and n != "__init__.py")
STDLIB = set(getattr(sys, "stdlib_module_names", ())) or {
    "os", "sys", "io", "time", "traceback", "platform", "json", "ctypes", "struct", "site", "re", "glob", "errno"}
SIBLINGS = {"_gpudoctor_child", "_framework_child", "_native"}
# numpy/jaxlib: only inside functions, in envs that have the framework; pynvml: only in nvml_child,
# which runs in gpudoctor's own interpreter (a dependency of gpudoctor).
ALLOWED_IMPORTS = STDLIB | SIBLINGS | {"numpy", "jaxlib", "pynvml"}


@pytest.mark.parametrize("name", CHILDREN)
def test_child_parses_as_python_36_and_imports_only_the_stdlib(name):
    with open(os.path.join(CHILDREN_DIR, name)) as fh:
        source = fh.read()
    tree = ast.parse(source, feature_version=(3, 6))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert {a.name.split(".")[0] for a in node.names} <= ALLOWED_IMPORTS
        elif isinstance(node, ast.ImportFrom):
            assert node.module.split(".")[0] in ALLOWED_IMPORTS
        assert not isinstance(node, ast.NamedExpr)
        assert not isinstance(node, ast.JoinedStr), "f-strings: keep the children to % formatting"
