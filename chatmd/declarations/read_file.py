"""The structured read_file tool (spec §4.8): ``<tool name="read_file|get_contents">`` and its roots.

Strict: the tool allows ``name`` and ``description`` (stripped; blank → none);
its children are ``<read id path [description]/>`` roots only (whitespace
text ignored; other text ``read_file.unexpected_text``, other elements
``read_file.unexpected_child``). A root's ``id`` is required and stripped
(blank → ``read_file.invalid_root_id``), its ``path`` a path expression
relative to ``${tool_dir}`` (``read_file.invalid_path``), and it has no
children. Root ids are unique (``read_file.duplicate_root``). Without roots the
tool gets one ``cwd`` root at ``${tool_dir}``. Paths use the reference's
diagnostic paths (``tool``, ``tool.read``, ``tool.read.N.id``).
"""

from __future__ import annotations

from chatmd.ast import Element, Text
from chatmd.declarations.attributes import StrictAttributes, stripped_or_none
from chatmd.declarations.content import location_of
from chatmd.declarations.context import LoweringContext
from chatmd.declarations.paths import PathExprError, parse_path_expr
from chatmd.ir import PathExpr, ReadFileTool, ReadRoot
from chatmd.provenance import Provenance
from chatmd.vocabulary import WS, is_blank

DEFAULT_ROOT = ReadRoot("cwd", PathExpr("tool_dir", ""), "ochat launch directory")
_TOOL_ATTRIBUTES = ("name", "description")
_ROOT_ATTRIBUTES = ("id", "path", "description")


def lower_read_file(element: Element, provenance: Provenance,
                    ctx: LoweringContext) -> ReadFileTool | None:
    """The :class:`~chatmd.ir.ReadFileTool`; None after any reported problem."""
    attributes = StrictAttributes(element, _TOOL_ATTRIBUTES, ctx, ("tool",))
    name = (attributes.optional("name") or "").strip(WS)
    description = stripped_or_none(attributes.optional("description"))
    ok = attributes.ok
    roots: list[ReadRoot] = []
    first_by_id: dict[str, Element] = {}
    index = 0
    saw_root = False
    for child in element.children:
        if type(child) is Text:
            if is_blank(child.text):
                continue
            ok = False
            ctx.error(child.span, "read_file.unexpected_text",
                      "unexpected text inside <tool name=\"read_file\">: only <read .../> roots "
                      "are allowed", path=("tool",),
                      hint="describe the tool with the description attribute")
        elif isinstance(child, Element) and child.tag == "read":
            saw_root = True
            root_id, root = _lower_root(child, index, ctx)
            if root is None:
                ok = False
            if root_id is None:
                pass
            elif root_id in first_by_id:
                ok = False
                ctx.error(child.span, "read_file.duplicate_root",
                          f"duplicate root id: {root_id}", path=("tool", "read"),
                          hint="give each <read> root its own id")
            else:
                first_by_id[root_id] = child
                if root is not None:
                    roots.append(root)
        else:
            assert isinstance(child, Element)
            ok = False
            ctx.error(child.span, "read_file.unexpected_child",
                      f"unexpected <{child.tag}> inside <tool name=\"read_file\">: only <read> "
                      "roots are allowed", path=("tool",))
        index += 1
    if not ok:
        return None
    return ReadFileTool(name, tuple(roots) if saw_root else (DEFAULT_ROOT,), description,
                        provenance)


def _lower_root(element: Element, index: int,
                ctx: LoweringContext) -> tuple[str | None, ReadRoot | None]:
    """The root's id (when it has a usable one) and the root (None after a problem)."""
    path = ("tool", "read", str(index))
    attributes = StrictAttributes(element, _ROOT_ATTRIBUTES, ctx, path)
    raw_id = attributes.required("id")
    raw_path = attributes.required("path")
    description = stripped_or_none(attributes.optional("description"))
    ok = attributes.ok
    root_id = None
    if raw_id is not None:
        root_id = raw_id.strip(WS)
        if not root_id:
            ok = False
            ctx.error(ctx.attribute_span(element, "id", first=True), "read_file.invalid_root_id",
                      "root id is empty: expected a name such as id=\"docs\"",
                      path=(*path, "id"))
    expression = None
    if raw_path is not None:
        try:
            expression = parse_path_expr(raw_path, relative_base="tool_dir")
        except PathExprError as exc:
            ok = False
            ctx.error(ctx.attribute_span(element, "path", first=True), "read_file.invalid_path",
                      f"invalid root path \"{raw_path}\": {exc}", path=(*path, "path"),
                      hint="use an absolute path, a path relative to ${tool_dir}, or start "
                      "with a variable such as ${workspace}/docs")
    for child in element.children:
        if type(child) is Text:
            if not is_blank(child.text):
                ok = False
                ctx.error(child.span, "read_file.unexpected_text",
                          "unexpected text inside <read>: a root has no content", path=path)
        else:
            assert isinstance(child, Element)
            ok = False
            ctx.error(child.span, "read_file.unexpected_child",
                      f"unexpected <{child.tag}> inside <read>: a root has no children",
                      path=path)
    root_id = root_id or None
    if not ok or root_id is None or expression is None:
        return root_id, None
    return root_id, ReadRoot(root_id, expression, description, location_of(element))
