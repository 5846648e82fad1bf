"""The "Moderator runtime" example of docs/runtime.md runs as written."""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any

from tests.support import REPO_ROOT


def test_the_moderator_runtime_doc_example_runs() -> None:
    readme = (REPO_ROOT / "docs" / "runtime.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Moderator runtime"):]
    example = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert example is not None
    namespace: dict[str, Any] = {}
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(example.group(1), "docs/runtime.md", "exec"), namespace)  # its asserts must hold
    assert 'id="moderation' not in output.getvalue()
    assert "Never delete files." in output.getvalue()
    assert namespace["again"].manager.restored
