"""Structure-aware hypothesis strategies for ChatML and ChatMD inputs.

* ChatML: expressions built from the grammar (:func:`chatml_exprs`), wrapped in
  *nesting* (one construct repeated ``k`` deep: parentheses, arrays, tags,
  records, modules, loops, lambdas, ``if``), *repetition* (many match arms,
  ``and`` bindings, ``;`` items, array elements, record fields) and *size*
  (long literals, comments, names); whole programs (:data:`chatml_programs`).
* ChatMD: documents of the vocabulary's elements with valid and invalid
  attributes, nested and repeated, with *file references* (imports, scripts,
  docs, images, agents, tool agents) into a generated folder that holds
  ordinary files, deep HTML, ChatML scripts, a file outside the prompt folder,
  a symlink leaving it, and malformed names (NUL, over-long).
* Damage: byte-level mutations (delete, insert, duplicate, overwrite,
  truncate) of valid test data (:func:`damaged`).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
CHATML_SAMPLES = sorted((REPO / "tests" / "chatml" / "testdata").rglob("*.chatml"))
CHATMD_SAMPLES = sorted((REPO / "tests" / "chatmd" / "testdata").rglob("*.chatmd"))

# ----------------------------------------------------------------------------- damage


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` after one to four byte-level mutations."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "overwrite", "truncate"]))
        at = draw(st.integers(0, len(out)))
        size = draw(st.integers(1, 64))
        if kind == "delete":
            del out[at:at + size]
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=size))
        elif kind == "duplicate":
            out[at:at] = out[at:at + size] * draw(st.integers(1, 50))
        elif kind == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=size))
            out[at:at + len(chunk)] = chunk
        else:
            del out[at:]
    return bytes(out)


def sample_bytes(paths: list[Path]) -> st.SearchStrategy[bytes]:
    return st.sampled_from(paths).map(lambda path: path.read_bytes())


def damaged_samples(paths: list[Path]) -> st.SearchStrategy[bytes]:
    return sample_bytes(paths).flatmap(damaged)


# ----------------------------------------------------------------------------- ChatML

_NAMES = st.sampled_from(["x", "y", "f", "g", "acc", "_", "print", "length", "M", "String"])
_TAGS = st.sampled_from(["`A", "`B", "`Some", "`None", "`T0"])
_LEAVES = st.one_of(
    st.integers(-5, 10**20).map(str),
    st.sampled_from(["x", "y", "f", "()", "true", "false", "1.5", "`A", "`B", "[]", "{}",
                     "M.x", "!r", "nan"]),
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters='"\\'),
            max_size=12).map(lambda s: f'"{s}"'),
)


def _extend(e: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        e.map(lambda a: f"({a})"),
        st.builds(lambda a, op, b: f"{a} {op} {b}", e,
                  st.sampled_from(["+", "-", "*", "/", "==", "<", "++", "+.", "&&", "||", ":="]),
                  e),
        st.builds(lambda f, a: f"{f}({a})", _NAMES, e),
        st.lists(e, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.builds(lambda t, a: f"{t}({a})", _TAGS, e),
        st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), e), max_size=3).map(
            lambda fs: "{ " + "; ".join(f"{k} = {v}" for k, v in fs) + " }"),
        st.builds(lambda a, b, c: f"if {a} then {b} else {c}", e, e, e),
        st.builds(lambda a, b: f"let x = {a} in {b}", e, e),
        st.builds(lambda a: f"fun x -> {a}", e),
        st.builds(lambda a, b, c: f"match {a} with | `A(y) -> {b} | _ -> {c}", e, e, e),
        st.builds(lambda a, b: f"while {a} do {b} done", e, e),
        st.builds(lambda a, b: f"{a}; {b}", e, e),
        st.builds(lambda a, b: f"{a}.{b}", e, st.sampled_from(["a", "b", "length"])),
        st.builds(lambda a, b: f"{a}[{b}]", e, e),
    )


chatml_exprs = st.recursive(_LEAVES, _extend, max_leaves=12)

#: (opening, closing) pairs nested ``k`` deep around an expression.
_NESTINGS = [("(", ")"), ("[", "]"), ("`A(", ")"), ("{ a = ", " }"), ("fun x -> ", ""),
             ("if true then ", " else 0"), ("let x = 1 in ", ""), ("f(", ")"), ("-", ""),
             ("while false do ", " done"), ("ref(", ")"), ("(1; ", ")"), ("!", "")]


@st.composite
def nested_exprs(draw: st.DrawFn) -> str:
    opening, closing = draw(st.sampled_from(_NESTINGS))
    depth = draw(st.integers(1, 3000))
    return opening * depth + draw(chatml_exprs) + closing * depth


@st.composite
def repeated_exprs(draw: st.DrawFn) -> str:
    count = draw(st.integers(1, 2000))
    kind = draw(st.sampled_from(["arms", "tags", "strings", "seq", "array", "record",
                                 "elif", "concat"]))
    e = draw(chatml_exprs)
    if kind == "arms":
        return "match x with " + "".join(f"| {i} -> {e} " for i in range(count)) + "| _ -> 0"
    if kind == "tags":
        return "match x with " + "".join(f"| `T{i}(y) -> {e} " for i in range(count))
    if kind == "strings":
        return "match x with " + "".join(f'| "s{i}" -> {e} ' for i in range(count)) + "| _ -> 0"
    if kind == "seq":
        return "(" + "; ".join([e] * count) + ")"
    if kind == "array":
        return "[" + ", ".join(f"`T{i}" for i in range(count)) + "]"
    if kind == "record":
        return "{ " + "; ".join(f"f{i} = {e}" for i in range(count)) + " }"
    if kind == "elif":
        return "".join(f"if x == {i} then {e} else " for i in range(count)) + "0"
    return " ++ ".join(['"a"'] * count)


@st.composite
def sized_exprs(draw: st.DrawFn) -> str:
    size = draw(st.integers(0, 200_000))
    kind = draw(st.sampled_from(["string", "comment", "name", "int", "escapes"]))
    if kind == "string":
        return '"' + "x" * size + '"'
    if kind == "comment":
        return "(* " + "(* x *) " * (size // 10) + " *) 1"
    if kind == "name":
        return "x" + "y" * size
    if kind == "int":
        return "9" * min(size, 5000)
    return '"' + "\\n" * (size // 2) + '"'


any_chatml_expr = st.one_of(chatml_exprs, nested_exprs(), repeated_exprs(), sized_exprs())


@st.composite
def chatml_statements(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["let", "rec", "module", "print", "type", "open", "expr"]))
    e = draw(any_chatml_expr)
    if kind == "let":
        return f"let {draw(_NAMES)} = {e}"
    if kind == "rec":
        count = draw(st.integers(1, 500))
        return "let rec f0 x = " + e + "".join(f"\nand f{i} x = f{i - 1}(x)"
                                                for i in range(1, count))
    if kind == "module":
        depth = draw(st.integers(1, 1500))
        return "module M = struct\n" * depth + f"let x = {e}\n" + "end\n" * depth
    if kind == "print":
        return f"print({e})"
    if kind == "type":
        count = draw(st.integers(1, 50))
        return "type t = [ " + " | ".join(f"`C{i}(int)" for i in range(count)) + " ]"
    if kind == "open":
        return "open String"
    return e


chatml_programs = st.lists(chatml_statements(), min_size=1, max_size=4).map("\n".join)

# ----------------------------------------------------------------------------- ChatMD

#: src values: existing files, missing ones, escaping ones and malformed ones.
REFERENCES = ["a.chatmd", "b.chatmd", "d.html", "d.txt", "i.png", "s.chatml", "sub/c.chatmd",
              "missing.chatmd", "../outside.txt", "/etc/hostname", "link.txt", "sub/../d.txt",
              "a\0b", "n" * 300, "a/" * 2100, "", " ", "https://example.invalid/x",
              "a.chatmd#frag", "\\\\server\\share", "d.txt\u200b"]

_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
_ATTR_VALUES = st.one_of(st.sampled_from(REFERENCES), _TEXT,
                         st.sampled_from(["true", "false", "1", "-1", "1e999", "gpt-4o", "auto"]))
_ATTR_NAMES = st.sampled_from(["src", "local", "markdown", "strip", "namespace", "role", "id",
                               "name", "agent", "command", "kind", "language", "max_steps",
                               "model", "type", "runtime", "x"])


@st.composite
def _attributes(draw: st.DrawFn) -> str:
    parts = []
    for name in draw(st.lists(_ATTR_NAMES, max_size=4)):
        if draw(st.booleans()):
            value = draw(_ATTR_VALUES).replace('"', "&quot;")
            parts.append(f'{name}="{value}"')
        else:
            parts.append(name)
    return (" " + " ".join(parts)) if parts else ""


_TAGS_MD = st.sampled_from(["user", "assistant", "system", "developer", "msg", "agent", "doc",
                            "img", "import", "config", "reasoning", "summary", "tool",
                            "tool_call", "tool_response", "script", "shell_access",
                            "moderator_runtime", "b", "br"])


def _element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.builds(lambda t, a, c: f"<{t}{a}>{c}</{t}>", _TAGS_MD, _attributes(), children),
        st.builds(lambda t, a: f"<{t}{a}/>", _TAGS_MD, _attributes()),
        st.lists(children, max_size=4).map("".join),
    )


_MD_LEAVES = st.one_of(_TEXT, st.sampled_from(["<", "&amp;", "&#0;", "</user>", "<!--x-->",
                                               "RAW|x|RAW", "\n", "<user", '"', "]]>"]))
chatmd_fragments = st.recursive(_MD_LEAVES, _element, max_leaves=10)


@st.composite
def chatmd_documents(draw: st.DrawFn) -> str:
    body = draw(chatmd_fragments)
    kind = draw(st.sampled_from(["plain", "nested", "repeated", "long"]))
    if kind == "nested":
        tag = draw(st.sampled_from(["user", "agent", "b", "msg"]))
        depth = draw(st.integers(1, 2000))
        return f"<{tag}>" * depth + body + f"</{tag}>" * depth
    if kind == "repeated":
        return body * draw(st.integers(1, 500))
    if kind == "long":
        return "<user>" + "x" * draw(st.integers(0, 300_000)) + body + "</user>"
    return body


def _reference_element(src: str, tag: str, flags: str) -> str:
    src = src.replace('"', "&quot;")
    if tag == "import":
        return f'<import src="{src}"{flags}/>'
    if tag == "script":
        return f'<script id="s" kind="moderator" language="chatml" src="{src}"{flags}/>'
    if tag == "tool":
        return f'<tool name="t" agent="{src}"{flags}/>'
    if tag == "agent":
        return f'<user><agent src="{src}"{flags}>go</agent></user>'
    return f'<user><{tag} src="{src}"{flags}/></user>'


@st.composite
def prompt_trees(draw: st.DrawFn) -> dict[str, bytes]:
    """A prompt folder: ``p.chatmd`` referring to the other generated files."""
    elements = []
    for _ in range(draw(st.integers(1, 6))):
        tag = draw(st.sampled_from(["import", "script", "doc", "img", "agent", "tool"]))
        flags = draw(st.sampled_from(["", " local", " local markdown", " local strip",
                                      " namespace=\"n\""]))
        elements.append(_reference_element(draw(st.sampled_from(REFERENCES)), tag, flags))
    elements.append(draw(chatmd_documents()))
    html_depth = draw(st.integers(0, 3000))
    return {
        "p.chatmd": "\n".join(elements).encode("utf-8", "surrogatepass"),
        "a.chatmd": draw(chatmd_fragments).encode("utf-8", "surrogatepass"),
        "b.chatmd": b'<import src="a.chatmd"/>\n<user>b</user>\n',
        "sub/c.chatmd": b'<import src="../b.chatmd"/>',
        "d.html": ("<div><b>" * html_depth + "x" + "</b></div>" * html_depth).encode(),
        "d.txt": draw(st.binary(max_size=64)),
        "i.png": b"\x89PNG\r\n",
        "s.chatml": draw(chatml_programs).encode("utf-8", "surrogatepass"),
    }
