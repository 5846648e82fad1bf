"""The editor's vocabulary table agrees with the validators: same attributes on every strict tag.

For each strict element (every shell element, ``<script>``, ``<moderator_runtime>``,
read_file's ``<tool>`` and ``<read>``), a prompt puts the element in a valid context
with an unknown attribute; the validator's ``shell.unknown_attribute`` message lists
the attributes it accepts ("expected one of ..."), which must be the table's.
"""

from __future__ import annotations

import re
from collections import deque

import pytest

from chatmd.frontend import check_prompt_text
from chatmd.shell.declare.lower_tool import TOOL_ATTRIBUTES
from chatmd.vocabulary import SHELL_TAGS
from runtime.lsp.vocabulary_table import TAGS

OPENERS = {"tool": '<tool type="shell" name="t" runtime="r">', "rule": '<rule id="a" action="allow">',
           "interceptor": '<interceptor id="i" phase="before" script="s">',
           "external_backend": '<external_backend executable="/bin/x">',
           "command": '<command program="p">', "shell_access": '<shell_access id="r">'}


def _path_to(tag: str) -> list[str]:
    """The shortest chain of shell elements from <shell_access> (or a shell tool) to ``tag``."""
    queue = deque([["shell_access"], ["tool"]])
    while queue:
        path = queue.popleft()
        if path[-1] == tag:
            return path
        queue.extend(path + [child] for child in TAGS[path[-1]].children
                     if child in SHELL_TAGS and child not in path)
    raise AssertionError(f"no context for <{tag}>")


def _nested(path: list[str], element: str) -> str:
    opens = "".join(OPENERS.get(tag, f"<{tag}>") for tag in path[:-1])
    return opens + element + "".join(f"</{tag}>" for tag in reversed(path[:-1]))


def _accepted(text: str, tag: str) -> set[str]:
    messages = [d.message for d in check_prompt_text(text).diagnostics
                if d.code == "shell.unknown_attribute" and "zzbogus" in d.message]
    assert messages, f"no unknown-attribute report for <{tag}> in {text}"
    listed = re.search(r"expected one of (.*)$", messages[0])
    assert listed is not None, messages[0]
    names = {name.strip() for name in listed.group(1).split(",")}
    return set() if names == {"none"} else names


@pytest.mark.parametrize("tag", sorted(SHELL_TAGS - {"read"}))
def test_shell_element_attributes(tag: str) -> None:
    text = _nested(_path_to(tag), f'<{tag} zzbogus="1"/>')
    assert _accepted(text, tag) == set(TAGS[tag].attributes)


def test_read_roots_of_capabilities_and_read_file_tools() -> None:
    capabilities = _accepted('<shell_access id="r"><capabilities><read zzbogus="1"/>'
                             "</capabilities></shell_access>", "read")
    read_file = _accepted('<tool name="read_file"><read zzbogus="1"/></tool>', "read")
    assert capabilities | read_file == set(TAGS["read"].attributes)


@pytest.mark.parametrize("element", [
    '<script language="chatml" kind="moderator" zzbogus="1">let x = 1</script>',
    '<moderator_runtime zzbogus="1" shell_runtime="r"/>'])
def test_core_strict_elements(element: str) -> None:
    tag = element[1:].split(" ", 1)[0]
    assert _accepted(element, tag) == set(TAGS[tag].attributes)


def test_tool_attributes_cover_every_form() -> None:
    read_file = _accepted('<tool name="read_file" zzbogus="1"/>', "tool")
    assert set(TOOL_ATTRIBUTES) | read_file <= set(TAGS["tool"].attributes)
    assert {"agent", "mcp_server", "include", "strict", "local"} <= set(TAGS["tool"].attributes)


def _enumerations() -> list[tuple[str, str, tuple[str, ...]]]:
    return [(tag, name, attribute.values) for tag in sorted(SHELL_TAGS - {"read"})
            for name, attribute in TAGS[tag].attributes.items() if attribute.values]


def test_enumerated_values_are_the_validators() -> None:
    compared = 0
    for tag, name, values in _enumerations():
        text = _nested(_path_to(tag), f'<{tag} {name}="zzbad"/>')
        messages = [d.message for d in check_prompt_text(text).diagnostics if "zzbad" in d.message]
        if not messages:  # validated later (compile time) or after a required attribute
            continue
        listed = re.search(r"expected (?:one of )?(.*), found", messages[0])
        assert listed is not None, messages[0]
        accepted = tuple(re.split(r", | or ", listed.group(1)))
        assert accepted == values, (tag, name)
        compared += 1
    assert compared >= 50


def test_core_enumerations() -> None:
    from chatmd.shell.declare.lower_tool import MODES
    from chatml.surfaces import SCRIPT_KIND_SURFACE

    assert TAGS["script"].attributes["kind"].values == tuple(SCRIPT_KIND_SURFACE)
    assert TAGS["tool"].attributes["mode"].values == MODES
