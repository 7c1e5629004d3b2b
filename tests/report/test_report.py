"""`gpudoctor report`: golden files on lab reports, round trip, size, CLI behaviour."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest

from gpudoctor.commands import report as report_cmd
from gpudoctor.privacy import Identity, redact_report
from gpudoctor.renderers.markdown import render_markdown
from gpudoctor.saved_report import load_saved_report, parse_saved_report

from report_helpers import FIXTURES, gpudoctor, load

GOLDEN = Path(__file__).resolve().parent / "golden"
LAB = Identity(users=["jdoe"], homes=["/home/jdoe"], hosts=["dgx-lab-07", "dgx-lab-09"])


def render(name: str) -> str:
    redacted = redact_report(load(name), LAB)
    return render_markdown(redacted, command="gpudoctor report -o ticket.md", generated_utc="2024-06-12T12:00:00Z")


@pytest.mark.parametrize("name", ["healthy_4gpu", "driver_too_old"])
def test_golden(name):
    """Regenerate with GPUDOCTOR_UPDATE_GOLDEN=1 after a deliberate change; review the diff."""
    text = render(f"{name}.json")
    golden = GOLDEN / f"{name}.md"
    if os.environ.get("GPUDOCTOR_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_driver_too_old_report_puts_the_root_cause_and_its_fix_first():
    text = render("driver_too_old.json")
    findings = text[text.index("## Findings"):text.index("## Facts")]
    assert findings.index("`driver-too-old`") < findings.index("`framework-gpu-not-detected`")
    assert "caused by `driver-too-old`" in findings
    assert "Upgrade the NVIDIA driver to 525.60.13" in findings


def test_report_has_the_readable_tables():
    text = render("healthy_4gpu.json")
    for heading in ("### System", "### Driver", "### GPUs", "### Visible devices", "### CUDA libraries",
                    "### Frameworks", "### Packages", "### Environment variables"):
        assert heading in text
    assert "| `cuda:3` | 3 | NVIDIA A100-SXM4-80GB | `0000:4E:00.0` |" in text  # logical <-> physical
    assert "| cudnn | `libcudnn.so.8` | 8.9.2 | `<home>/miniconda3/envs/train/lib/" in text  # real path and version
    assert "| `nvidia-cudnn-cu12` | `8.9.2.26` | pip |" in text
    assert "Made with gpudoctor 0.1.0 by `gpudoctor report -o ticket.md` on 2024-06-12T12:00:00Z" in text


def test_placeholders_are_never_bare_html():
    """GitHub drops unknown tags: `<home>` outside a code span would vanish from the page."""
    text = render("driver_too_old.json")
    body = text[:text.index("## Machine-readable report")]
    outside_code = "".join(part for i, part in enumerate(body.split("`")) if i % 2 == 0)
    for placeholder in ("<home>", "<user>", "<host>", "<secret>"):
        assert placeholder not in outside_code.replace("<summary>", "")


def test_round_trip_report_from_report_gives_identical_findings(tmp_path):
    first = tmp_path / "first.md"
    assert gpudoctor(["report", "--from", str(FIXTURES / "driver_too_old.json"), "-o", str(first)]) == 0
    second = tmp_path / "second.md"
    assert gpudoctor(["report", "--from", str(first), "-o", str(second)]) == 0
    original = load("driver_too_old.json")
    assert load_saved_report(str(first))["findings"] == load_saved_report(str(second))["findings"]
    codes = [f["code"] for f in load_saved_report(str(second))["findings"]]
    assert codes == [f["code"] for f in original["findings"]]
    assert load_saved_report(str(second))["findings"][0]["fix"] == original["findings"][0]["fix"]


def test_json_with_backtick_fences_survives_the_round_trip():
    report = load("healthy_4gpu.json")
    report["findings"][0]["detail"] = "a log:\n```\nCUDA error\n```\n````"
    back = parse_saved_report(render_markdown(report))
    assert back == report


def eight_gpu_report() -> dict:
    report = load("healthy_4gpu.json")
    facts = report["facts"]
    for key in ("gpus",):
        facts[key] = [dict(copy.deepcopy(facts[key][i % 4]), index=i) for i in range(8)]
    facts["visible_devices"]["mapping"] = [dict(copy.deepcopy(facts["visible_devices"]["mapping"][i % 4]),
                                                logical=f"cuda:{i}", physical_index=i) for i in range(8)]
    facts["runtime_test"]["devices"] = [dict(copy.deepcopy(facts["runtime_test"]["devices"][0]), ordinal=i)
                                        for i in range(8)]
    facts["frameworks"]["packages"].update({f"package-{i}": "1.0.0" for i in range(250)})  # a big env
    return report


def test_a_typical_8_gpu_machine_stays_under_100_kb():
    text = render_markdown(redact_report(eight_gpu_report(), LAB))
    assert len(text.encode("utf-8")) < 100 * 1024


def test_report_runs_the_check_when_not_given_a_file(tmp_path, monkeypatch):
    import gpudoctor.pipeline as pipeline
    import gpudoctor.target_python as target_python

    seen = {}

    class FakeReport:
        def to_json(self):
            return load("healthy_4gpu.json")

    def fake_run_check(options, on_progress=None):
        seen["options"] = options
        return FakeReport()

    monkeypatch.setattr(pipeline, "run_check", fake_run_check)
    # /opt/py/bin/python is not on this machine: take it as the interpreter it stands for
    monkeypatch.setattr(target_python, "validate_python", lambda path: path)
    out = tmp_path / "r.md"
    assert gpudoctor(["report", "--quick", "--python", "/opt/py/bin/python", "--timeout", "7", "-o", str(out)]) == 0
    assert seen["options"].quick and seen["options"].python == "/opt/py/bin/python" and seen["options"].timeout == 7
    assert "`gpudoctor report --quick --python /opt/py/bin/python --timeout 7 -o " in out.read_text()


def test_report_to_stdout(capsys):
    assert gpudoctor(["report", "--from", str(FIXTURES / "healthy_4gpu.json"), "-o", "-"]) == 0
    assert capsys.readouterr().out.startswith("# gpudoctor report: ✅ OK")


def test_default_output_file_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert gpudoctor(["report", "--from", str(FIXTURES / "healthy_4gpu.json")]) == 0
    (made,) = list(tmp_path.glob("gpudoctor-report-*.md"))
    assert made.name.startswith("gpudoctor-report-2") and made.stat().st_size > 1000


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"),
    ("not json at all", "holds no JSON"),
    ('{"a": 1}', "is not a gpudoctor report"),
    ("{broken", "not valid JSON"),
])
def test_bad_from_files_are_a_usage_error_with_a_clear_message(tmp_path, capsys, content, message):
    path = tmp_path / "saved.json"
    if content is not None:
        path.write_text(content)
    assert gpudoctor(["report", "--from", str(path), "-o", str(tmp_path / "x.md")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_unwritable_output_is_a_clear_error(tmp_path, capsys):
    target = tmp_path / "no" / "such" / "dir" / "r.md"
    assert gpudoctor(["report", "--from", str(FIXTURES / "healthy_4gpu.json"), "-o", str(target)]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_a_crashing_check_is_reported_not_raised(monkeypatch, tmp_path, capsys):
    import gpudoctor.pipeline as pipeline

    def boom(options, on_progress=None):
        raise RuntimeError("probe table broken")

    monkeypatch.setattr(pipeline, "run_check", boom)
    assert gpudoctor(["report", "-o", str(tmp_path / "r.md")]) == 2
    assert "internal error" in capsys.readouterr().err


def test_command_line_is_rebuilt_from_options():
    import argparse

    args = argparse.Namespace(from_file="saved file.json", quick=False, python=None, timeout=30.0,
                              no_redact=True, output="out.md")
    assert report_cmd.command_line(args) == "gpudoctor report --from 'saved file.json' --no-redact -o out.md"
