"""Which of torch's symbols an extension needs and whether the installed torch defines them
(probes/frameworks/elf_symbols.py): on shared objects the C compiler builds, and on the real torch wheel."""

from __future__ import annotations

import struct
import subprocess

import pytest

from gpudoctor.probes.frameworks.elf_symbols import ExportedSymbols, TorchExports, undefined_torch_symbols
from tests.frameworks.conftest import frameworks_python
from tests.frameworks.torch_abi_libs import ADD_OP, SET_DEVICE, SET_DEVICE_OLD, WEAK_HOOK, extension, torch_lib


@pytest.fixture
def torch_dir(tmp_path):
    folder = tmp_path / "torch"
    torch_lib(folder, "libc10.so", [SET_DEVICE, "_ZN3c1010TensorImpl7releaseEv"])
    torch_lib(folder, "libtorch_cpu.so", [ADD_OP])
    return folder


def test_an_extension_built_against_another_torch_needs_a_symbol_this_one_lacks(tmp_path, torch_dir):
    ext = extension(tmp_path / "old_ext.so", [SET_DEVICE_OLD, ADD_OP, "memcpy"], torch_dir, weak=[WEAK_HOOK])
    # only strong references into torch's namespaces: not libc's memcpy, not the weak hook
    assert sorted(undefined_torch_symbols(str(ext))) == sorted([SET_DEVICE_OLD, ADD_OP])
    with TorchExports(str(torch_dir)) as exports:
        assert exports.readable
        assert exports.missing([SET_DEVICE_OLD, ADD_OP]) == [SET_DEVICE_OLD]


def test_an_extension_built_against_this_torch_needs_nothing_it_lacks(tmp_path, torch_dir):
    ext = extension(tmp_path / "ext.so", [SET_DEVICE, ADD_OP], torch_dir)
    with TorchExports(str(torch_dir)) as exports:
        assert exports.missing(undefined_torch_symbols(str(ext))) == []


def test_a_library_without_a_gnu_hash_table_gives_no_answer(tmp_path):
    lib = torch_lib(tmp_path / "torch", "libc10.so", [SET_DEVICE], hash_style="sysv")
    assert not ExportedSymbols(str(lib)).readable
    assert not ExportedSymbols(str(lib)).defines(SET_DEVICE)


def test_without_libc10_and_libtorch_there_is_no_telling_what_torch_defines(tmp_path):
    torch_lib(tmp_path / "torch", "libtorch_cpu.so", [ADD_OP])
    with TorchExports(str(tmp_path / "torch")) as exports:
        assert not exports.readable
    with TorchExports(str(tmp_path / "missing")) as exports:
        assert not exports.readable and exports.libraries == []


@pytest.mark.parametrize("content", [b"", b"\x7fELF\x02\x01", b"\x7fELF\x02\x01" + b"\xff" * 200, b"not an elf" * 20])
def test_garbage_is_no_answer_not_a_crash(tmp_path, content):
    path = tmp_path / "libc10.so"
    path.write_bytes(content)
    assert undefined_torch_symbols(str(path)) is None
    assert not ExportedSymbols(str(path)).readable


def _defined_by_full_scan(path: str):
    """Every defined dynamic symbol of a library, read the slow way (all of .dynsym), to check the hash lookup."""
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dynsym = next(s for s in sections if s[1] == 11)
    strtab = sections[dynsym[6]][4]
    names = []
    for off in range(dynsym[4] + 24, dynsym[4] + dynsym[5], 24):
        st_name, _info, _other, shndx = struct.unpack_from("<IBBH", data, off)
        if shndx != 0 and st_name:
            names.append(data[strtab + st_name:data.index(b"\0", strtab + st_name)].decode())
    return names


def _real_torch_dir() -> str:
    folder = subprocess.run([frameworks_python("torch"), "-c", "import importlib.util as u; "
                             "print(u.find_spec('torch').submodule_search_locations[0])"],
                            capture_output=True, text=True).stdout.strip()
    if not folder:
        pytest.skip("no torch in the frameworks venv")
    return folder


def test_the_real_torch_defines_every_torch_symbol_its_own_python_bindings_need():
    torch = _real_torch_dir()
    needed = undefined_torch_symbols(f"{torch}/lib/libtorch_python.so")
    assert needed and len(needed) > 100  # libtorch_python calls into libtorch_cpu and libc10 thousands of times
    with TorchExports(torch) as exports:
        assert exports.readable and exports.missing(needed) == []
        # without libtorch_cpu in view, most of them are missing: the lookup really answers per library
        exports.libraries = [lib for lib in exports.libraries if not lib.path.endswith("libtorch_cpu.so")]
        assert len(exports.missing(needed)) > len(needed) // 2


def test_the_hash_lookup_agrees_with_a_full_scan_of_the_real_libc10():
    library = f"{_real_torch_dir()}/lib/libc10.so"
    defined = _defined_by_full_scan(library)
    exported = ExportedSymbols(library)
    assert exported.readable and len(defined) > 1000
    assert all(exported.defines(name) for name in defined)
    assert not any(exported.defines(name + "_not_in_torch") for name in defined[:200])
    exported.close()


def test_a_hash_table_pointing_outside_the_file_answers_no_not_a_crash(tmp_path):
    lib = torch_lib(tmp_path / "torch", "libc10.so", [SET_DEVICE])
    exported = ExportedSymbols(str(lib))
    assert exported.defines(SET_DEVICE)
    nbuckets, buckets = exported._table[2], exported._table[7]  # point every bucket far past the file's end
    exported.close()
    data = bytearray(lib.read_bytes())
    data[buckets:buckets + 4 * nbuckets] = b"\xff\xff\xff\x7f" * nbuckets
    lib.write_bytes(bytes(data))
    broken = ExportedSymbols(str(lib))
    assert broken.readable and broken.defines(SET_DEVICE) is False
    broken.close()
