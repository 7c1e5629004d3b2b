"""Real shared objects, built with the system C compiler, that stand in for torch's libraries and for an
extension built against them. C's asm labels give the functions torch's mangled C++ names, so the files
are what a linker really writes (dynamic symbol tables, GNU hash tables, DT_NEEDED), not hand-made bytes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Iterable, List, Sequence

import pytest

from tests.lab.build import find_compiler

SET_DEVICE = "_ZN3c104cuda9SetDeviceEi"  # c10::cuda::SetDevice(int), as torch 2.1 exports it
SET_DEVICE_OLD = "_ZN3c104cuda9SetDeviceEa"  # the same function with another signature: an older torch's
ADD_OP = "_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE"  # at::_ops::add_Tensor::call
WEAK_HOOK = "_ZN3c1014optional_hookEv"  # referenced weakly: a missing one is no failure


def _compile(out: Path, source: str, flags: Sequence[str] = ()) -> Path:
    cc = find_compiler()
    if cc is None:
        pytest.skip("no C compiler on PATH")
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_suffix(".c")
    src.write_text(source)
    cmd = [cc, "-shared", "-fPIC", "-O0", "-o", str(out), str(src), *flags]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stderr}"
    src.unlink()
    return out


def _definitions(symbols: Iterable[str]) -> str:
    return "".join(f'void f{i}(void) __asm__("{s}");\nvoid f{i}(void) {{}}\n' for i, s in enumerate(symbols))


def torch_lib(torch_dir: Path, name: str, symbols: Iterable[str], hash_style: str = "gnu") -> Path:
    """torch/lib/<name> exporting `symbols`."""
    return _compile(torch_dir / "lib" / name, _definitions(symbols), [f"-Wl,--hash-style={hash_style}",
                                                                      f"-Wl,-soname,{name}"])


def extension(path: Path, needs: Sequence[str], torch_dir: Path, weak: Sequence[str] = ()) -> Path:
    """An extension module that calls `needs` (and, weakly, `weak`), linked against torch/lib/libc10.so."""
    lines: List[str] = []
    for i, s in enumerate(needs):
        lines.append(f'extern void n{i}(void) __asm__("{s}");')
    for i, s in enumerate(weak):
        lines.append(f'extern void w{i}(void) __asm__("{s}") __attribute__((weak));')
    calls = "".join(f"n{i}();" for i in range(len(needs))) + "".join(f"if (w{i}) w{i}();" for i in range(len(weak)))
    source = "\n".join(lines) + f"\nvoid PyInit_ext(void) {{ {calls} }}\n"
    # -lc10 records DT_NEEDED libc10.so, as torch's cpp_extension links it; undefined symbols stay allowed
    return _compile(path, source, [f"-L{torch_dir / 'lib'}", "-Wl,--no-as-needed", "-lc10",
                                  "-Wl,--allow-shlib-undefined"])
