"""Structure-aware hypothesis strategies for ChatMD documents and small prompt folders.

Documents are built from the closed vocabulary (:mod:`chatmd.vocabulary`):
core and shell tags (and a few unknown names), attributes with well-formed and
hostile values, text with entities, ``RAW|...|RAW`` blocks, comments, nesting
(up to :data:`~tests.fuzzing.budget.MAX_DEPTH`) and repetition (up to
:data:`~tests.fuzzing.budget.MAX_REPEAT`). :func:`prompt_folders` gives a whole
folder: a root prompt, imported prompts (that may import each other, cycles
included), a ChatML module, an HTML and a Markdown document, and an image.

File references (``src``/``agent``/``path`` values) include the hostile
shapes of issue 16: NUL (raw and as ``&#0;``), lone surrogates and other
characters the file system cannot encode, over-long names, ``..`` climbs,
absolute paths and names of folders.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from chatmd.vocabulary import CORE_TAGS, SHELL_TAGS
from tests.fuzzing.budget import MAX_DEPTH, MAX_REPEAT, PENDING_SHAPES

S = st.SearchStrategy

#: Files a generated folder holds (relative names), by kind.
PROMPT_FILES = ("root.chatmd", "a.chatmd", "sub/b.chatmd")
OTHER_FILES = ("m.chatml", "d.html", "d.md", "i.png", "sub/notes.txt")

core_tags = st.sampled_from(sorted(CORE_TAGS))
shell_tags = st.sampled_from(sorted(SHELL_TAGS))
unknown_tags = st.sampled_from(["b", "div", "foo", "User", "x-y", "_", "msg2"])
tag_names = st.one_of(core_tags, core_tags, shell_tags, unknown_tags)

attribute_names = st.sampled_from([
    "id", "name", "src", "role", "type", "local", "markdown", "namespace", "agent", "mode",
    "runtime", "path", "value", "description", "command", "model", "action", "default",
    "extends", "cwd", "when", "max_count", "min_count", "reasoning_effort", "temperature",
    "lang", "entry", "sandbox", "program", "values", "merge", "override", "format", "detail",
])

#: References that crash until the issue-16 branch is merged (see budget.PENDING_SHAPES).
_PENDING_REFERENCES = st.one_of(
    st.sampled_from(["a\0b", "m\0.chatml", "\0", "../outside.txt", "link.txt"]),
    st.integers(256, 5000).map(lambda n: "x" * n),
)

file_references = st.one_of(
    st.sampled_from(PROMPT_FILES + OTHER_FILES),
    st.sampled_from([
        "&#0;", "a&#0;b.chatmd", "&#xD800;.md", "\ud800x", "&#x110000;",
        "..", "../../../../etc/hostname", "/etc/hostname", "/", "sub",
        "sub/../a.chatmd", "./././a.chatmd", "", " ", "a.chatmd ", "sub/", "~/.bashrc",
        "file:///etc/hostname", "http://127.0.0.1:9/x", "d.html#x", "%00", "\\..\\a",
        "missing.chatmd", "i.png/..",
    ]),
    st.integers(1, 255).map(lambda n: "x" * n),
    st.integers(1, 400).map(lambda n: "d/" * n + "a.md"),
    st.text(st.characters(blacklist_characters="\0"), max_size=12),
    *([_PENDING_REFERENCES, st.text(max_size=12)] if PENDING_SHAPES else []),
)

plain_values = st.one_of(
    st.sampled_from(["true", "false", "x", "user", "shell", "fixed", "structured", "allow",
                     "deny", "ask", "required", "gpt-4o", "${workspace}", "1", "-1", "0.5",
                     "99999999999999999999999", "1e400", "nan", "replace", "linux", "auto"]),
    st.text(max_size=10) if PENDING_SHAPES
    else st.text(st.characters(blacklist_characters="\0"), max_size=10),
)
attribute_values = st.one_of(plain_values, file_references)


def _quote(value: str) -> str:
    quote = '"' if '"' not in value else "'"
    return f"{quote}{value}{quote}"


attributes = st.lists(
    st.one_of(
        st.builds(lambda n, v: f" {n}={_quote(v)}", attribute_names, attribute_values),
        attribute_names.map(lambda n: f" {n}"),  # a bare flag (local, markdown)
        st.builds(lambda n, v: f" {n}={v}", attribute_names, st.sampled_from(["x", "", "'", "\""])),
    ),
    max_size=4,
).map("".join)

texts = st.one_of(
    st.text(st.characters(blacklist_categories=["Cs"],
                          blacklist_characters="" if PENDING_SHAPES else "\0"), max_size=20),
    st.sampled_from(["hello", "&amp;", "&lt;user&gt;", "&#0;", "&#xD800;", "&bogus;", "&",
                     "<", ">", "</", "<!", "<!--", "-->", "RAW|", "|RAW", "# title\n",
                     "* item\n", "```\ncode\n```", "\r\n", "\t", "\ufeff", "{{x}}", "${x}"]),
)

raw_blocks = texts.map(lambda t: f"RAW|{t}|RAW")
comments = texts.map(lambda t: f"<!--{t.replace('-->', '')}-->")


def _element(children: S[str]) -> S[str]:
    return st.one_of(
        st.builds(lambda n, a, c: f"<{n}{a}>{c}</{n}>", tag_names, attributes,
                  st.lists(children, max_size=3).map("".join)),
        st.builds(lambda n, a: f"<{n}{a}/>", tag_names, attributes),
        st.builds(lambda n, a, c: f"<{n}{a}>{c}", tag_names, attributes, children),  # unclosed
        st.builds(lambda n, c: f"{c}</{n}>", tag_names, children),  # stray close
    )


fragments: S[str] = st.recursive(st.one_of(texts, raw_blocks, comments), _element,
                                 max_leaves=12)


def _nest(pair: tuple[str, int], body: str) -> str:
    tag, depth = pair
    return f"<{tag}>" * depth + body + f"</{tag}>" * depth


deep_nesting = st.builds(
    lambda tag, depth, body: _nest((tag, depth), body),
    st.one_of(core_tags, unknown_tags), st.integers(1, MAX_DEPTH), fragments)

repetitions = st.builds(lambda piece, n, sep: sep.join([piece] * n),
                        st.one_of(fragments, st.sampled_from(["</user>", "<user>", "<!--",
                                                              "RAW|", "<doc src=\"d.md\"/>"])),
                        st.integers(1, MAX_REPEAT), st.sampled_from(["", "\n", " "]))

references = st.builds(
    lambda kind, ref, extra: {
        "import": f'<import src={_quote(ref)}{extra}/>',
        "doc": f'<user><doc src={_quote(ref)}{extra}/></user>',
        "img": f'<user><img src={_quote(ref)}{extra}/></user>',
        "script": f'<script id="s" src={_quote(ref)}{extra}/>',
        "agent": f'<user><agent src={_quote(ref)}{extra}>go</agent></user>',
        "tool": f'<tool name="t" agent={_quote(ref)}{extra}/>',
    }[kind],
    st.sampled_from(["import", "doc", "img", "script", "agent", "tool"]),
    file_references,
    st.sampled_from(["", " local", " local markdown", " namespace=\"n\"", " markdown",
                     " local=\"false\""]),
)

_SHELL_SECTION = st.sampled_from([
    '<capabilities sandbox="required"><read path="${workspace}"/></capabilities>',
    '<policy default="ask"><rule id="r" action="allow"><all><basename value="rg"/>'
    '<trusted_executable/></all></rule></policy>',
    '<environment inherit="safe"><set name="LANG" value="C"/><pass name="T"/></environment>',
    '<limits wall_time="30s" total_output="512KiB"/>',
    '<backends><bubblewrap when="linux"/><direct/></backends>',
    '<resolver><search_path path="/usr/bin"/><executable id="rg" path="/usr/bin/rg"/></resolver>',
    '<secrets><from_file path="../secret"/><from_env name="X"/></secrets>',
    '<audit format="jsonl" path="${session_dir}/a.jsonl"/>',
    '<approvals provider="ui" scopes="once"/>',
])

shell_sections = st.builds(
    lambda rid, extends, sections, inner, tool: (
        f'<shell_access id={_quote(rid)}{extends}>{"".join(sections)}{inner}</shell_access>'
        f'{tool}'),
    st.sampled_from(["r", "ro", "", "a:b", "r r"]),
    st.sampled_from(["", ' extends="builtin:yolo@1"', ' extends="r"', ' extends="nope"']),
    st.lists(_SHELL_SECTION, max_size=4),
    st.one_of(st.just(""), fragments),
    st.sampled_from(["", '<tool name="sh" type="shell" mode="structured" runtime="r"/>',
                     '<tool name="f" type="shell" mode="fixed" runtime="r" command="pwd"/>',
                     '<tool name="read_file"><read id="x" path=".."/></tool>']),
)

messages = st.builds(lambda role, body: f"<{role}>{body}</{role}>",
                     st.sampled_from(["user", "assistant", "system", "developer"]), fragments)

documents: S[str] = st.lists(
    st.one_of(messages, messages, references, shell_sections, fragments, deep_nesting,
              repetitions, raw_blocks, comments),
    min_size=1, max_size=6,
).map("\n".join)

html_texts = st.one_of(
    st.builds(lambda tag, n: f"<{tag}>" * n + "x", st.sampled_from(["b", "div", "ul><li"]),
              st.integers(1, MAX_DEPTH)),
    st.text(max_size=40),
    st.sampled_from(["<p>a<b>b</p>", "<script>x</script>", "<table><tr><td>1", "&#0;<br/>"]),
)


@st.composite
def prompt_folders(draw: Any) -> dict[str, str | bytes]:
    """A folder of files: ``root.chatmd`` and everything it may reference."""
    files: dict[str, str | bytes] = {name: draw(documents) for name in PROMPT_FILES}
    files["m.chatml"] = draw(st.sampled_from(["let x = 1", "let f y = y +", "\xff"]))
    files["d.html"] = draw(html_texts)
    files["d.md"] = draw(st.one_of(texts, documents))
    files["i.png"] = draw(st.one_of(st.just(b"\x89PNG\r\n\x1a\n"), st.binary(max_size=16)))
    files["sub/notes.txt"] = draw(st.one_of(texts, st.binary(max_size=16)))
    return files
