"""Children run on the TARGET interpreter, possibly old: stdlib-only and Python 3.6 syntax."""

from __future__ import annotations

import ast
import os

import pytest

from gpudoctor.probes.runner import CHILDREN_DIR

CHILDREN = ["_framework_child.py", "packages_child.py", "torch_child.py", "tensorflow_child.py",
            "jax_child.py", "cupy_child.py"]
ALLOWED_IMPORTS = {"os", "sys", "time", "traceback", "platform", "json", "_gpudoctor_child", "_framework_child",
                   "numpy", "jaxlib"}  # numpy/jaxlib: only inside functions, in envs that have the framework


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
