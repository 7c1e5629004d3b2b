"""Small saved wheel fragments for the refresh tests, and the code that made them.

`python -m tests.tools.fragments` rewrites tests/tools/data/*.whl and the index JSON that points at
them; the tests check that the saved files are still what this code makes.

- a tiny ELF64 with a `.nv_fatbin` section whose containers follow the real fatbin layout (16-byte
  container header `<IHHQ` with magic 0xBA55ED50, 64-byte entry headers `<HHIQ` with the SM number
  at offset 28): three ordinary containers (SASS 7.5, 8.0, 9.0 and PTX 9.0) and one special kernel
  container with SASS 8.9 only;
- a torch wheel holding that library deflated (as every real torch wheel does), and one holding it
  stored, each with METADATA, torch/version.py and a 256 KiB stored filler library, so that a test can
  show how little of the wheel a refresh downloads.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

DATA = Path(__file__).resolve().parent / "data"
FATBIN_MAGIC = 0xBA55ED50


def fatbin_entry(kind: int, sm: int) -> bytes:
    payload = b"image sm_%d kind %d" % (sm, kind)
    payload += b"\0" * (-len(payload) % 8)
    header = struct.pack("<HHIQ", kind, 0x0101, 64, len(payload)) + b"\0" * 12 + struct.pack("<I", sm)
    return header + b"\0" * (64 - len(header)) + payload


def fatbin_container(sass: Sequence[int], ptx: Sequence[int]) -> bytes:
    entries = b"".join(fatbin_entry(2, sm) for sm in sass) + b"".join(fatbin_entry(1, sm) for sm in ptx)
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(entries)) + entries


def elf_with_sections(sections: List[Tuple[bytes, bytes]]) -> bytes:
    """A minimal little-endian ELF64 shared object: header, section bodies, .shstrtab, section table."""
    names = b"\0" + b"".join(n + b"\0" for n, _ in sections) + b".shstrtab\0"
    body, offsets = b"", []
    for _, data in sections:
        body += b"\0" * (-(64 + len(body)) % 8)
        offsets.append(64 + len(body))
        body += data
    str_off = 64 + len(body)
    body += names
    body += b"\0" * (-(64 + len(body)) % 8)
    shoff = 64 + len(body)
    table = b"\0" * 64  # the null section
    name_at = 1
    for (name, data), off in zip(sections, offsets):
        table += struct.pack("<IIQQQQIIQQ", name_at, 1, 2, 0, off, len(data), 0, 0, 8, 0)
        name_at += len(name) + 1
    table += struct.pack("<IIQQQQIIQQ", name_at, 3, 0, 0, str_off, len(names), 0, 0, 1, 0)
    shnum = len(sections) + 2
    header = (b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
              + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 56, 0, 64, shnum, shnum - 1))
    return header + body + table


def libtorch_cuda() -> bytes:
    fat = b"".join(fatbin_container([75, 80, 90], [90]) for _ in range(3)) + fatbin_container([89], [])
    return elf_with_sections([(b".text", b"\x90" * 256), (b".nv_fatbin", fat)])


METADATA = """Metadata-Version: 2.1
Name: torch
Version: {version}
Requires-Python: >=3.11
Requires-Dist: filelock
Requires-Dist: cuda-toolkit[cublas,cudart]=={toolkit}; platform_system == "Linux"
Requires-Dist: nvidia-cudnn-cu13=={cudnn}; platform_system == "Linux"
Requires-Dist: opt-einsum>=3.3; extra == "opt-einsum"

The long description is never read.
"""


def _member(name: str, method: int = zipfile.ZIP_DEFLATED) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))  # fixed: the saved bytes are reproducible
    info.compress_type = method
    return info


def torch_wheel(version: str, cuda: str, toolkit: str, cudnn: str, stored_library: bool) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(_member("torch/lib/libtorch_cpu.so", zipfile.ZIP_STORED), bytes(range(256)) * 1024)
        z.writestr(_member("torch/version.py"), f"__version__ = '{version}'\ncuda: Optional[str] = '{cuda}'\nhip = None\n")
        z.writestr(_member("torch/lib/libtorch_cuda.so", zipfile.ZIP_STORED if stored_library else zipfile.ZIP_DEFLATED),
                   libtorch_cuda())
        z.writestr(_member(f"torch-{version}.dist-info/METADATA"), METADATA.format(version=version, toolkit=toolkit, cudnn=cudnn))
    return buf.getvalue()


def metadata_wheel(dist_info: str, lines: Sequence[str]) -> bytes:
    """A wheel holding only its METADATA (all the refresh reads of TensorFlow and JAX wheels)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(_member(f"{dist_info}/METADATA"), "\n".join(["Metadata-Version: 2.1", *lines, "", ""]))
    return buf.getvalue()


def tf_wheel() -> bytes:
    return metadata_wheel("tensorflow-2.22.0.dist-info", [
        "Name: tensorflow", "Version: 2.22.0", "Requires-Python: >=3.10",
        'Requires-Dist: nvidia-cuda-runtime-cu12<13.0,>=12.5.82; extra == "and-cuda"',
        'Requires-Dist: nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == "and-cuda"'])


def jax_wheel() -> bytes:
    return metadata_wheel("jax_cuda13_plugin-0.13.0.dist-info", [
        "Name: jax-cuda13-plugin", "Version: 0.13.0", "Requires-Python: >=3.12", "Requires-Dist: jax-cuda13-pjrt==0.13.0",
        'Requires-Dist: nvidia-cuda-runtime>=13.0.48; extra == "with-cuda"',
        'Requires-Dist: nvidia-cudnn-cu13<10.0,>=9.12.0.46; extra == "with-cuda"'])


WHEELS = {
    "torch-2.16.0-cp312-cp312-manylinux_2_28_x86_64.whl": lambda: torch_wheel("2.16.0", "13.3", "13.3.1", "9.28.1.4", False),
    "torch-2.16.0-cp312-cp312-manylinux_2_28_x86_64-stored.whl": lambda: torch_wheel("2.16.0", "13.3", "13.3.1", "9.28.1.4", True),
    "torch-2.14.1-cp312-cp312-manylinux_2_28_x86_64.whl": lambda: torch_wheel("2.14.1", "13.0", "13.0.2", "9.99.0.1", False),
    "tensorflow-2.22.0-cp312-cp312-manylinux_2_27_x86_64.whl": tf_wheel,
    "jax_cuda13_plugin-0.13.0-cp312-cp312-manylinux_2_27_x86_64.whl": jax_wheel,
}


def _file(name: str, data: bytes) -> Dict[str, object]:
    return {"filename": name, "url": f"../../packages/xx/{name}", "size": len(data), "yanked": False,
            "digests": {"sha256": hashlib.sha256(data).hexdigest()}, "upload_time": "2027-01-20T10:00:00"}


def index_documents(wheels: Dict[str, bytes]) -> Dict[str, Dict[str, object]]:
    """The index's JSON for each project, shaped as the real responses (see index-torch-2.15.json)."""
    def doc(name, releases):
        return {"info": {"name": name}, "releases": releases}
    torch = {"2.16.0": [_file(n, wheels[n]) for n in wheels if n.startswith("torch-2.16.0") and "stored" not in n],
             "2.14.1": [_file("torch-2.14.1-cp312-cp312-manylinux_2_28_x86_64.whl",
                              wheels["torch-2.14.1-cp312-cp312-manylinux_2_28_x86_64.whl"])],
             "2.17.0rc1": [_file("torch-2.17.0rc1-cp312-cp312-manylinux_2_28_x86_64.whl", b"")]}
    tf = {"2.22.0": [_file("tensorflow-2.22.0-cp312-cp312-manylinux_2_27_x86_64.whl",
                           wheels["tensorflow-2.22.0-cp312-cp312-manylinux_2_27_x86_64.whl"])]}
    jax = {"0.13.0": [_file("jax_cuda13_plugin-0.13.0-cp312-cp312-manylinux_2_27_x86_64.whl",
                            wheels["jax_cuda13_plugin-0.13.0-cp312-cp312-manylinux_2_27_x86_64.whl"])]}
    runtime = {"13.2.51": [_file("nvidia_cuda_runtime-13.2.51-py3-none-manylinux_2_27_x86_64.whl", b"")],
               "13.3.29": [_file("nvidia_cuda_runtime-13.3.29-py3-none-manylinux_2_27_x86_64.whl", b"")]}
    return {"torch": doc("torch", torch), "tensorflow": doc("tensorflow", tf), "jax-cuda13-plugin": doc("jax-cuda13-plugin", jax),
            "nvidia-cuda-runtime": doc("nvidia-cuda-runtime", runtime)}


def build() -> Dict[str, bytes]:
    return {name: make() for name, make in WHEELS.items()}


def main() -> None:
    wheels = build()
    for name, data in wheels.items():
        (DATA / name).write_bytes(data)
    (DATA / "index-fragments.json").write_text(json.dumps(index_documents(wheels), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
