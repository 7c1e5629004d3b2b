"""Facts from issue-form fields: the label on one line, the value on a later one.

GitHub issue forms (TensorFlow's, PyTorch's and most projects' bug templates) render each answer under
its label ("### TensorFlow version", a blank line, "2.18.0"). Pasted into a ticket, the version is
alone on its line, where no line signature can tell what it is a version of. This reads the pairs
from the log's kept text (its head and tail, reader.HeadAndTail) and adds the facts no line gave.
"""

from __future__ import annotations

import re
from typing import Any, Dict

# label -> (fact, pattern the value must match in full)
FIELDS = {
    # "2.18.0", "tf 2.16", or tf.version.GIT_VERSION and VERSION ("v2.11.0-rc2-15-g6290819256d 2.11.0")
    "tensorflow version": ("tf_version", re.compile(r"(?:tf\s*)?v?(\d+\.\d+(?:\.\d+)?)(?:[-\s].*)?", re.IGNORECASE)),
    "python version": ("python_version", re.compile(r"(?:python\s*)?(3\.\d{1,2}(?:\.\d+)?)\b.*", re.IGNORECASE)),
    "pytorch version": ("torch_version", re.compile(r"(\d+\.\d+(?:\.\d+)?)(?:[+\s].*)?")),
    "os platform and distribution": ("windows_platform", re.compile(r"(Windows(?: \d+)?)\b.*", re.IGNORECASE)),
    "cuda/cudnn version": ("cuda_stated", re.compile(r"(?:cuda\s*)?v?(\d+\.\d+)(?:[.\s/,].*)?", re.IGNORECASE)),
}
FIELD_RE = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?(?P<label>%s)[ \t]*:?[ \t]*\n(?:[ \t]*\n){0,2}[ \t]*(?P<value>\S[^\n]*)$"
                      % "|".join(re.escape(k) for k in FIELDS), re.IGNORECASE | re.MULTILINE)


def template_facts(text: str) -> Dict[str, Any]:
    """{fact: value} of every issue-form field in the text whose value has the field's shape."""
    found: Dict[str, Any] = {}
    for m in FIELD_RE.finditer(text):
        fact, shape = FIELDS[m.group("label").lower()]
        value = shape.fullmatch(m.group("value").strip())
        if value and fact not in found:
            found[fact] = value.group(1)
    return found
