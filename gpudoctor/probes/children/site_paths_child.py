"""Where the target interpreter installs packages (stdlib only, Python 3.6 syntax; run WITHOUT -S).

Emits site_packages (site.getsitepackages, the user site when enabled, and sys.path entries named
site-packages/dist-packages, for old virtualenvs without getsitepackages, and sys.path entries holding
nvidia-* wheel folders or torch, where torch's loader looks), prefix and version.
"""

import os
import site
import sys


def site_packages():
    found = []
    try:
        found.extend(site.getsitepackages())
    except AttributeError:  # virtualenv < 20 replaced site.py with one that lacks it
        pass
    if getattr(site, "ENABLE_USER_SITE", False):
        try:
            found.append(site.getusersitepackages())
        except AttributeError:
            pass
    found.extend(p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages"))
    # torch's loader (_preload_cuda_deps in torch/__init__.py) looks in <every sys.path entry>/nvidia/<lib>/lib,
    # so a PYTHONPATH folder holding nvidia-* wheels or torch counts too
    found.extend(p for p in sys.path if p and (os.path.isdir(os.path.join(p, "nvidia"))
                                               or os.path.isdir(os.path.join(p, "torch", "lib"))))
    unique = []
    for path in found:
        if path not in unique and os.path.isdir(path):
            unique.append(path)
    return unique


if __name__ == "__main__":
    from _gpudoctor_child import emit  # here, so the parent can import site_packages() as a module

    emit("site_packages", site_packages())
    emit("prefix", sys.prefix)
    emit("version", "%d.%d.%d" % sys.version_info[:3])
