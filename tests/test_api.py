"""gpudoctor.check() / gpudoctor.explain() as a notebook meets them: the HTML read back with
html.parser (what a reader sees), the rich text of a REPL, and no framework in the caller."""

import json
import os
from html.parser import HTMLParser

from rich.console import Console

import gpudoctor
from gpudoctor.model import Finding, Layer, Severity
from gpudoctor.renderers.html import report_html
from tests.e2e.test_lab_frameworks import fake_torch
from tests.lab import scenarios


class Reader(HTMLParser):
    """The visible text, the text of every <pre>/<code> block, and every tag that was opened."""

    def __init__(self):
        super().__init__()
        self.text, self.code_blocks, self.tags, self._stack, self._code = [], [], [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._stack.append(tag)
        if tag == "pre":
            self._code = []

    def handle_endtag(self, tag):
        while self._stack and self._stack.pop() != tag:
            pass
        if tag == "pre" and self._code is not None:
            self.code_blocks.append("".join(self._code))
            self._code = None

    def handle_data(self, data):
        self.text.append(data)
        if self._code is not None:
            self._code.append(data)

    @property
    def visible(self):
        return " ".join("".join(self.text).split())


def read(html):
    reader = Reader()
    reader.feed(html)
    reader.close()
    return reader


TORCH_ON_470 = """
import json, sys, gpudoctor
report = gpudoctor.check(quick=True)
print(json.dumps({"verdict": report.verdict, "exit_code": report.exit_code, "codes": [f.code for f in report.findings],
                  "json_verdict": report.to_json()["verdict"], "html": report._repr_html_(),
                  "frameworks_imported": [m for m in ("torch", "tensorflow", "jax") if m in sys.modules]}))
"""


def test_check_in_a_notebook_on_driver_470_with_a_cu124_torch(lab, tmp_path):
    fake_torch(tmp_path / "site", "2.5.1+cu124", "12.4")
    (tmp_path / "site" / "torch" / "__init__.py").write_text("raise SystemExit('torch was imported')\n")
    machine = scenarios.rtx2080ti_x4_two_full()
    machine.driver_version, machine.cuda_driver_version = "470.82.01", 11040
    proc = lab.run_python(machine, TORCH_ON_470, env_extra={"PYTHONPATH": os.pathsep.join([str(tmp_path / "site"),
                                                                                          os.getcwd()])})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["verdict"] == out["json_verdict"] == "error" and out["exit_code"] == 1
    assert out["frameworks_imported"] == []
    page = read(out["html"])
    # the verdict first, then the root cause before the symptoms
    assert page.visible.startswith("gpudoctor check: ✖ ERROR")
    assert "root cause: The NVIDIA driver is too old" in page.visible
    assert page.visible.index("driver-too-old") < page.visible.index("gpu-memory-full")
    assert "(root cause)" in page.visible
    # each fix command is a <pre><code> block of its own, whole
    assert "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu118" in page.code_blocks
    assert any(block.startswith("export CUDA_VISIBLE_DEVICES=0,1") for block in page.code_blocks)
    assert all("\n" not in block and "Or install" not in block for block in page.code_blocks)
    assert "script" not in page.tags


def test_a_finding_quoting_markup_comes_out_inert():
    evil = Finding("framework-import-failed", Severity.ERROR, Layer.FRAMEWORK, "import <b>failed</b>",
                   'the log said <script>alert("x")</script> & <img src=x onerror=alert(1)>',
                   fix=['pip install "torch<3"  # <script>alert(2)</script>'], caused_by="</div><script>")
    page = read(report_html("error", "1 error <i>", [evil]))
    assert "script" not in page.tags and "img" not in page.tags and "b" not in page.tags and "i" not in page.tags
    assert '<script>alert("x")</script> & <img src=x onerror=alert(1)>' in page.visible
    assert page.code_blocks == ['pip install "torch<3"  # <script>alert(2)</script>']


def test_explain_renders_html_and_rich_text_root_cause_first():
    report = gpudoctor.explain("ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory")
    assert report.verdict == "error" and report.exit_code == 1
    assert report.to_json()["findings"][0]["code"] == "cudnn-missing"
    page = read(report._repr_html_())
    assert page.visible.startswith("gpudoctor explain: ✖ ERROR") and "cudnn-missing" in page.visible
    assert 'conda install "cudnn=8"' in page.code_blocks
    assert 'pip install "nvidia-cudnn-cu11==8.*"' in page.code_blocks
    console = Console(width=100, record=True, file=open(os.devnull, "w"), color_system=None)
    console.print(report)
    text = console.export_text()
    assert "cuDNN is not found" in text
    assert '1. conda install "cudnn=8"' in [line.strip() for line in text.splitlines()]


def test_check_refuses_what_is_not_a_python(tmp_path):
    try:
        gpudoctor.check(quick=True, python="/bin/ls")
    except ValueError as exc:
        assert "not a Python interpreter" in str(exc)
    else:
        raise AssertionError("/bin/ls was taken for a Python")


def test_import_gpudoctor_stays_cheap():
    import subprocess
    import sys

    code = "import sys, gpudoctor; print(sorted(m for m in sys.modules if m.startswith(('gpudoctor', 'rich'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['gpudoctor']"


def test_explain_is_callable_whichever_was_imported_first():
    import subprocess
    import sys

    code = ("import sys, gpudoctor{imp}; r = gpudoctor.explain('CUDA driver version is insufficient for CUDA "
            "runtime version'); print(r.verdict, r.findings[0].code)")
    for imp in ("", "; import gpudoctor.explain", "; from gpudoctor.explain import explain_text"):
        proc = subprocess.run([sys.executable, "-c", code.format(imp=imp)], capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout.split()[0] == "error", (imp, proc.stderr)
