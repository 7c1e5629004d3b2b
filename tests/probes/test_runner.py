"""Child probes: partial facts survive a crash or a hang, and native prints cannot corrupt them."""

import os
import sys
import time

import pytest

from gpudoctor.probes.runner import CHILDREN_DIR, ChildSpec, run_children


@pytest.fixture
def child_scripts():
    scripts = {
        "ok": "from _gpudoctor_child import emit\nimport os\nemit('a', 1)\nos.write(1, b'noise from a C library\\n')\nemit('b', [1, 2])\n",
        "segv": "from _gpudoctor_child import emit\nimport ctypes\nemit('a', 1)\nctypes.string_at(0)\n",
        "hang": "from _gpudoctor_child import emit\nimport time\nemit('a', 1)\ntime.sleep(60)\n",
        "raise": "from _gpudoctor_child import emit\nemit('a', 1)\nraise RuntimeError('boom')\n",
    }
    paths = []
    for name, text in scripts.items():
        path = os.path.join(CHILDREN_DIR, f"_test_{name}_{os.getpid()}.py")
        with open(path, "w") as handle:
            handle.write(text)
        paths.append(path)
    yield {name: os.path.basename(p) for name, p in zip(scripts, paths)}
    for path in paths:
        os.remove(path)


def test_statuses_and_partial_records(child_scripts):
    specs = [ChildSpec(name, script, sys.executable, dict(os.environ), 2.0, python_flags=("-S", "-E"))
             for name, script in child_scripts.items()]
    started = time.monotonic()
    results = run_children(specs)
    elapsed = time.monotonic() - started
    assert results["ok"].status == "ok" and results["ok"].records == {"a": 1, "b": [1, 2]}
    assert "noise from a C library" in results["ok"].stderr_tail
    assert results["segv"].status == "crashed" and results["segv"].signal == "SIGSEGV"
    assert results["hang"].status == "timeout" and results["hang"].records == {"a": 1}
    assert results["raise"].status == "failed" and "boom" in results["raise"].stderr_tail
    assert all(r.records.get("a") == 1 for r in results.values())
    assert elapsed < 10  # in parallel: the hang costs its timeout, not more


def test_missing_interpreter_is_not_started():
    result = run_children([ChildSpec("x", "interpreter_child.py", "/no/such/python", {}, 2.0)])["x"]
    assert result.status == "not-started" and "/no/such/python" in result.error


def test_a_grandchild_that_escapes_the_group_and_holds_the_pipe_does_not_hang_the_probe(tmp_path):
    script = os.path.join(CHILDREN_DIR, f"_test_escape_{os.getpid()}.py")
    with open(script, "w") as handle:
        handle.write("from _gpudoctor_child import emit\nimport os, time\nemit('a', 1)\n"
                     "if os.fork() == 0:\n    os.setsid()\n    time.sleep(8)\n    os._exit(0)\n"
                     "time.sleep(60)\n")
    try:
        result = run_children([ChildSpec("escape", os.path.basename(script), sys.executable, dict(os.environ), 1.0,
                                         python_flags=("-S", "-E"))])["escape"]
    finally:
        os.remove(script)
    assert result.status == "timeout"  # it came back: the daemon's open pipe did not keep us waiting
