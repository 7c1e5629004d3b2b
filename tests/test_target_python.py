"""`check --python PATH` with something that is not a Python interpreter: a usage error (exit 2,
one line on stderr), never a "probe crashed" finding; old Pythons of TF 1.x envs still pass."""

import os
import shutil
import stat
import subprocess
import sys

import pytest

from gpudoctor.target_python import NotAPython, validate_python

GPUDOCTOR = shutil.which("gpudoctor") or os.path.join(os.path.dirname(sys.executable), "gpudoctor")


def executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def old_python(tmp_path, hexversion):
    """Stands in for an interpreter we cannot install here: answers the probe as that Python would."""
    return executable(tmp_path / "python", "#!/bin/sh\n"
                      f'[ "$1" = -S ] && [ "$2" = -c ] && printf "gpudoctor-python %d" {hexversion} && exit 0\n'
                      "exit 2\n")


@pytest.mark.parametrize("kind", ["/bin/ls", "shell script", "text file made executable"])
def test_check_python_not_an_interpreter_is_a_usage_error(tmp_path, kind):
    path = {"/bin/ls": "/bin/ls",
            "shell script": executable(tmp_path / "env.sh", "#!/bin/sh\necho 'hello from a script'\n"),
            "text file made executable": executable(tmp_path / "notes.txt", "just some notes\n")}[kind]
    proc = subprocess.run([GPUDOCTOR, "check", "--quick", "--json", "--python", path],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "is not a Python interpreter" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "probe-crashed" not in proc.stderr


def test_report_python_not_an_interpreter_is_a_usage_error(tmp_path):
    proc = subprocess.run([GPUDOCTOR, "report", "--quick", "-o", "-", "--python", "/bin/ls"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "is not a Python interpreter" in proc.stderr


def test_this_python_and_its_env_folder_are_accepted():
    assert validate_python(sys.executable) == os.path.abspath(sys.executable)
    assert validate_python(sys.prefix) == os.path.join(os.path.abspath(sys.prefix), "bin", "python")


@pytest.mark.parametrize("version,hexversion", [("2.7.18", 0x020712F0), ("3.6.15", 0x03060FF0)])
def test_python_27_and_36_of_tensorflow_1_envs_are_accepted(tmp_path, version, hexversion):
    path = old_python(tmp_path, hexversion)
    assert validate_python(path) == path


def test_python_26_is_refused_by_name(tmp_path):
    with pytest.raises(NotAPython, match=r"is Python 2\.6; gpudoctor examines Python 2\.7 and newer"):
        validate_python(old_python(tmp_path, 0x020609F0))


def test_an_interpreter_that_never_answers_is_refused(tmp_path):
    path = executable(tmp_path / "python", "#!/bin/sh\nexec sleep 30\n")
    with pytest.raises(NotAPython, match="did not answer as a Python interpreter within 0.5 s"):
        validate_python(path, timeout=0.5)
