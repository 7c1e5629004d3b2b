"""Is `--python PATH` a Python interpreter? Decided before any probe runs, so that /bin/ls or a
text file is a usage error (exit 2, one line) and not a "probe crashed" finding."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Optional

ANSWER_TIMEOUT_S = 10.0  # a cold conda Python on a network file system can take seconds to start
OLDEST_HEXVERSION = 0x02070000  # Python 2.7: TensorFlow 1.x environments are still examined
# Works on Python 2.7 and 3.x alike, imports nothing that a broken site-packages could break.
_PROBE = "import sys; sys.stdout.write('gpudoctor-python %d' % sys.hexversion)"


class NotAPython(ValueError):
    """The one-line reason, for stderr."""


def resolve_python(path: str) -> str:
    """The interpreter a PATH names: a file, a command on PATH, or an env folder (its bin/python)."""
    resolved = path if os.sep in path else (shutil.which(path) or path)
    if os.path.isdir(resolved):  # a conda env or venv folder: use its interpreter
        resolved = os.path.join(resolved, "bin", "python")
    if not (os.path.isfile(resolved) and os.access(resolved, os.X_OK)):
        raise NotAPython(f"--python {path}: no executable Python interpreter there")
    return os.path.abspath(resolved)


def validate_python(path: Optional[str], timeout: float = ANSWER_TIMEOUT_S) -> Optional[str]:
    """The absolute path of the interpreter, after it answered one line as only a Python does."""
    if path is None:
        return None
    resolved = resolve_python(path)
    try:
        proc = subprocess.run([resolved, "-S", "-c", _PROBE], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=timeout, env=_plain_env())
    except subprocess.TimeoutExpired:
        raise NotAPython(f"--python {path}: {resolved} did not answer as a Python interpreter within {timeout:g} s")
    except OSError as exc:  # a text file marked executable: "Exec format error"
        raise NotAPython(f"--python {path}: {resolved} is not a Python interpreter ({exc.strerror or exc})")
    words = proc.stdout.decode("ascii", "replace").split()
    if proc.returncode != 0 or len(words) != 2 or words[0] != "gpudoctor-python" or not words[1].isdigit():
        raise NotAPython(f"--python {path}: {resolved} is not a Python interpreter "
                         "(it did not run `-c \"import sys; print(sys.hexversion)\"`)")
    if int(words[1]) < OLDEST_HEXVERSION:
        raise NotAPython(f"--python {path}: {resolved} is Python {_version(int(words[1]))}; "
                         "gpudoctor examines Python 2.7 and newer")
    return resolved


def _version(hexversion: int) -> str:
    return f"{hexversion >> 24}.{(hexversion >> 16) & 0xFF}"


def _plain_env() -> dict:
    # PYTHONHOME/PYTHONPATH of gpudoctor's own Python would break (or mislead) another interpreter.
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP")}
