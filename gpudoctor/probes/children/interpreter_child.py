"""Describe the target interpreter (stdlib only; may run on an old Python without gpudoctor)."""

import os
import platform
import site
import sys

from _gpudoctor_child import emit

emit("python_version", platform.python_version())
emit("executable", sys.executable)
emit("prefix", sys.prefix)
emit("base_prefix", getattr(sys, "base_prefix", sys.prefix))
emit("conda_env", os.path.isdir(os.path.join(sys.prefix, "conda-meta")))
try:
    emit("site_packages", list(site.getsitepackages()) + [site.getusersitepackages()])
except Exception as exc:  # some virtualenv versions lack getsitepackages
    emit("site_packages", [p for p in sys.path if p.endswith("-packages")])
    emit("site_packages_error", repr(exc))
