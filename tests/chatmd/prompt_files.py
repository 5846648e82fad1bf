"""Test helpers: write a small tree of prompt files and load or check a prompt in it."""

from __future__ import annotations

from pathlib import Path

from chatmd.frontend import CheckResult, check_prompt_text, load_prompt_text
from chatmd.ir import Prompt

#: A valid prompt using every element and tool shape (needs ``m.chatml`` beside it).
EVERYTHING = """\
<config model="m" temperature="0.5" max_tokens="9" reasoning_effort="low" id="s" show_tool_call/>
<tool name="read_file"><read id="src" path="lib" description="d"/><read id="all" path="/"/></tool>
<tool name="apply_patch"/>
<tool name="rg" command="rg" description="search"/>
<tool name="triage" agent="p.chatmd" local/>
<tool mcp_server="stdio:srv" includes="a, b" strict client_id_env="I"/>
<tool mcp_server="https://h"/>
<tool name="sh" type="shell" mode="structured" runtime="dev"><!-- c --></tool>
<shell_access id="dev" extends="builtin:yolo@1"><limits wall_time="1s"/></shell_access>
<script language="chatml" kind="moderator">RAW|let x = 1|RAW</script>
<script language="chatml" kind="shell_matcher" id="m" src="m.chatml" fuel="7"/>
<moderator_runtime shell_runtime="dev"/>
<system>s</system>
<user ochat-history-id="1:s:0">hi <img src="a.png" local/><doc src="d.txt" local strip/>
<agent src="a.chatmd" local>q <img src="b"/></agent></user>
<msg role="tool" tool_call function_name="f" tool_call_id="c0">{}</msg>
<tool_call function_name="f" tool_call_id="c" id="i"><doc src="./.chatmd/0.tool-call.c.json" local/></tool_call>
<tool_response tool_call_id="c">RAW|ok|RAW</tool_response>
<assistant id="m1" status="completed" phase="final"><import src="x"/></assistant>
<reasoning id="r" status="done"><summary type="t">s</summary>plain</reasoning>
<user/>
"""


def write_files(root: Path, files: dict[str, str]) -> None:
    """Create ``files`` (relative path → text) under ``root``."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def load(root: Path, text: str, *, name: str = "root.chatmd", files: dict[str, str] | None = None,
         confine: bool = False) -> Prompt:
    """Load ``text`` as the root prompt ``name`` in folder ``root`` (after writing ``files``).

    Registered later-phase checks (shell compilation, ...) are not run: these
    helpers test the frontend's own phases.
    """
    write_files(root, files or {})
    return load_prompt_text(text, name=name, prompt_dir=str(root), confine=confine, checks=())


def check(root: Path, text: str, *, name: str = "root.chatmd",
          files: dict[str, str] | None = None, confine: bool = False) -> CheckResult:
    """Check ``text`` as the root prompt ``name`` in folder ``root`` (after writing ``files``)."""
    write_files(root, files or {})
    return check_prompt_text(text, name=name, prompt_dir=str(root), confine=confine, checks=())


def codes(result: CheckResult) -> list[str]:
    return [d.code for d in result.diagnostics]
