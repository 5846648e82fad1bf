"""Lowering of a long-form or compact shell tool (``<tool type="shell">`` / ``runtime=``).

Spec §5.1-§5.3: the closed attribute set, mode-specific attributes, the
``<command>``/``<arguments>`` children of fixed tools, and the rule that a
fixed tool names exactly one command source. Legacy ``<tool name command/>``
declarations (no ``type``, no ``runtime``) are desugared by the compiler, not
here (:func:`chatmd.shell.compile.legacy.desugar_legacy_tool`).
"""

from __future__ import annotations

from chatmd.ast import Element
from chatmd.provenance import Provenance
from chatmd.shell.declare.lowering import (
    TOOL_CODES,
    Attributes,
    Lowered,
    Lowering,
    Path,
    child_elements,
    expect_empty,
)
from chatmd.shell.declare.typed_declarations import (
    ArgumentsSpec,
    ArgvCommand,
    ChainMode,
    CompactCommand,
    FixedArg,
    FixedMode,
    LiteralArg,
    PathArg,
    RawMode,
    ScriptMode,
    SecretArg,
    ShellToolDecl,
    StructuredMode,
    ToolMode,
)
from chatmd.shell.declare.values import PATH_VARIABLES

COMMON_ATTRIBUTES = ("name", "type", "mode", "runtime", "description", "stdin", "rationale",
                     "result", "stream", "nonzero")
MODE_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "fixed": ("command", "executable_ref"),
    "structured": (),
    "chain": (),
    "raw": ("executable", "arguments_before_script"),
    "script": ("script", "interpreter", "executable", "fixed_arguments", "verification",
               "max_source_bytes"),
}
TOOL_ATTRIBUTES: tuple[str, ...] = COMMON_ATTRIBUTES + (
    "command", "executable_ref", "executable", "script", "interpreter",
    "arguments_before_script", "fixed_arguments", "verification", "max_source_bytes")
MODES = tuple(MODE_ATTRIBUTES)
PRESENCE = ("none", "optional", "required")
FIXED_CHILDREN = ("command", "arguments")
COMMAND_CHILDREN = ("arg", "secret_arg", "path_arg")


def _fixed_argument(lowering: Lowering, element: Element, path: Path) -> FixedArg | None:
    tag = element.tag
    span = element.span
    argument: FixedArg | None = None
    if tag == "arg":
        value = Attributes(lowering, element, path, ("value",)).text("value", required=True)
        if value is not None:
            argument = LiteralArg(value, span=span)
    elif tag == "secret_arg":
        attributes = Attributes(lowering, element, path, ("env", "prefix"))
        env = attributes.env_name("env", required=True)
        prefix = attributes.string("prefix", default="") or ""
        if env is not None:
            argument = SecretArg(env, prefix, span=span)
    else:
        attributes = Attributes(lowering, element, path, ("path", "base"))
        value = attributes.text("path", required=True)
        base = attributes.string("base")
        if base is not None and base not in PATH_VARIABLES:
            attributes.value_error("base", "shell.invalid_path",
                                   f"invalid value for base: unknown path variable {base!r}; "
                                   "expected one of " + ", ".join(PATH_VARIABLES))
            value = None
        if value is not None:
            argument = PathArg(value, base, span=span)
    expect_empty(lowering, element, path)
    return argument


def _command_child(lowering: Lowering, element: Element, path: Path) -> ArgvCommand | None:
    attributes = Attributes(lowering, element, path, ("program", "executable_ref"))
    given = [name for name in ("program", "executable_ref") if attributes.present(name)]
    arguments: list[FixedArg] = []
    failed = False
    for child in child_elements(lowering, element, path,
                                "only <arg>, <secret_arg> and <path_arg> elements"):
        if child.tag in COMMAND_CHILDREN:
            argument = _fixed_argument(lowering, child, path + (child.tag,))
            failed = failed or argument is None
            if argument is not None:
                arguments.append(argument)
        else:
            lowering.error(child.span, "shell.unknown_element",
                           f"<{child.tag}> is not allowed inside <command>; expected <arg>, "
                           "<secret_arg> or <path_arg>", path)
    if len(given) != 1:
        if given:
            lowering.error(element.span, "shell.tool_conflicting_command",
                           "<command> takes exactly one of program or executable_ref, found "
                           "both")
        else:
            lowering.error(element.span, "shell.tool_missing_command",
                           "<command> needs program=\"...\" or executable_ref=\"...\"")
        return None
    value = attributes.text(given[0], required=True)
    if value is None or failed:
        return None
    if given[0] == "program":
        return ArgvCommand(program=value, arguments=tuple(arguments), span=element.span)
    return ArgvCommand(executable_ref=value, arguments=tuple(arguments), span=element.span)


def _arguments_child(lowering: Lowering, element: Element, path: Path) -> ArgumentsSpec | None:
    attributes = Attributes(lowering, element, path,
                            ("mode", "min_count", "max_count", "max_item_bytes"))
    mode = attributes.enum("mode", PRESENCE, required=True)
    spec = ArgumentsSpec(mode or "optional", attributes.uint("min_count"),
                         attributes.uint("max_count"), attributes.uint("max_item_bytes"),
                         span=element.span)
    expect_empty(lowering, element, path)
    return spec if mode is not None else None


def _fixed_mode(lowering: Lowering, element: Element, attributes: Attributes,
                children: dict[str, Element]) -> FixedMode | None:
    sources = [name for name in ("command", "executable_ref") if attributes.present(name)]
    if "command" in children:
        sources.append("<command>")
    command_child = (_command_child(lowering, children["command"], ("tool", "command"))
                     if "command" in children else None)
    arguments = ArgumentsSpec()
    if "arguments" in children:
        parsed = _arguments_child(lowering, children["arguments"], ("tool", "arguments"))
        if parsed is None:
            return None
        arguments = parsed
    if len(sources) > 1:
        lowering.error(element.span, "shell.tool_conflicting_command",
                       "a fixed shell tool takes exactly one command source, found "
                       + " and ".join(sources),
                       hint="keep one of command=\"...\", executable_ref=\"...\" or a "
                       "<command> child")
        return None
    if not sources:
        lowering.error(element.span, "shell.tool_missing_command",
                       "a fixed shell tool needs a command: command=\"...\", "
                       "executable_ref=\"...\" or a <command> child")
        return None
    source = sources[0]
    if source == "<command>":
        return None if command_child is None else FixedMode(command_child, arguments)
    value = attributes.values.get(source)
    if value is None:  # a flag or a duplicate, already reported
        return None
    if not value.strip():
        lowering.error(attributes.span(source), "shell.tool_missing_command",
                       f"the {source} attribute of a fixed shell tool is empty: expected "
                       f"{source}=\"...\" with a command")
        return None
    if source == "command":
        return FixedMode(CompactCommand(value.strip()), arguments)
    return FixedMode(ArgvCommand(executable_ref=value, span=attributes.span(source)), arguments)


def _script_mode(lowering: Lowering, attributes: Attributes) -> ScriptMode | None:
    script = attributes.path_expr("script", required=True)
    interpreter = attributes.path_expr("interpreter")
    has_interpreter = attributes.present("interpreter")
    executable = attributes.boolean("executable", not has_interpreter)
    if has_interpreter and attributes.values.get("executable") == "true":
        lowering.error(attributes.span("executable"), "shell.tool_conflicting_script",
                       'a script tool with an interpreter cannot also set executable="true"',
                       hint="the interpreter runs the script; drop executable=\"true\"")
        return None
    fixed_arguments = attributes.json_strings("fixed_arguments", ())
    verification = attributes.enum("verification", ("sha256",), default="sha256") or "sha256"
    max_source_bytes = attributes.positive_int("max_source_bytes", 1048576)
    if script is None:
        return None
    return ScriptMode(script, interpreter, executable, fixed_arguments, verification,
                      max_source_bytes)


def _children_by_tag(lowering: Lowering, element: Element, mode: str | None
                     ) -> dict[str, Element]:
    children: dict[str, Element] = {}
    path: Path = ("tool",)
    for child in child_elements(lowering, element, path,
                                "only <command> and <arguments> (fixed mode)"):
        if child.tag not in FIXED_CHILDREN:
            lowering.error(child.span, "shell.unknown_element",
                           f"<{child.tag}> is not allowed inside a shell <tool>; expected "
                           "<command> or <arguments>", path)
        elif mode is not None and mode != "fixed":
            lowering.error(child.span, "shell.tool_mode_child",
                           f"<{child.tag}> is not valid for {mode} mode: only fixed tools "
                           "take <command> and <arguments>")
        elif child.tag in children:
            lowering.error(child.span, "shell.duplicate_section",
                           f"duplicate section: {child.tag}", path + (child.tag,))
        else:
            children[child.tag] = child
    return children


def lower_shell_tool(element: Element, provenance: Provenance) -> Lowered[ShellToolDecl]:
    """Validate a shell ``<tool>`` (routed by ``type="shell"`` or ``runtime``)."""
    lowering = Lowering(provenance)
    attributes = Attributes(lowering, element, ("tool",), TOOL_ATTRIBUTES, TOOL_CODES)
    tool_type = attributes.values.get("type")
    if tool_type is not None and tool_type != "shell":
        lowering.error(attributes.span("type"), "shell.tool_invalid_type",
                       f"a tool with a runtime must have type=\"shell\", found {tool_type!r}",
                       hint='use type="shell", or drop runtime=... for a built-in tool')
        return lowering.finish(None)
    mode = attributes.values.get("mode", "fixed")
    if mode not in MODE_ATTRIBUTES:
        lowering.error(attributes.span("mode"), "shell.tool_invalid_mode",
                       f"unknown shell tool mode {mode!r}; expected one of " + ", ".join(MODES))
        known_mode = None
    else:
        known_mode = mode
        allowed = set(COMMON_ATTRIBUTES) | set(MODE_ATTRIBUTES[mode])
        for attribute in element.attrs:
            if attribute.name in TOOL_ATTRIBUTES and attribute.name not in allowed:
                valid = [m for m in MODES if attribute.name in MODE_ATTRIBUTES[m]]
                lowering.error(attributes.span(attribute.name), "shell.tool_mode_attribute",
                               f"attribute {attribute.name} is not valid for {mode} mode",
                               hint=f"{attribute.name} belongs to {' and '.join(valid)} mode")
                attributes.bad.add(attribute.name)
    written_name = attributes.text("name", required=True)
    name = (written_name or "").strip()
    if written_name and not name:
        attributes.missing("name")
    lowering.origin = f"tool:{name}"
    runtime = attributes.ref("runtime", required=True)
    description = attributes.string("description")
    stdin = attributes.enum("stdin", PRESENCE, default="none") or "none"
    rationale = attributes.enum("rationale", PRESENCE,
                                default="none" if mode == "fixed" else "optional")
    result = attributes.enum("result", ("combined", "stdout", "structured"), default="combined")
    stream = attributes.enum("stream", ("finalized", "sanitized"), default="finalized")
    nonzero = attributes.enum("nonzero", ("result", "error"), default="result")
    children = _children_by_tag(lowering, element, known_mode)
    tool_mode: ToolMode | None = None
    if known_mode == "fixed":
        tool_mode = _fixed_mode(lowering, element, attributes, children)
    elif known_mode == "structured":
        tool_mode = StructuredMode()
    elif known_mode == "chain":
        tool_mode = ChainMode()
    elif known_mode == "raw":
        executable = attributes.path_expr("executable", required=True)
        before = attributes.json_strings("arguments_before_script", ("-c",))
        tool_mode = None if executable is None else RawMode(executable, before)
    elif known_mode == "script":
        tool_mode = _script_mode(lowering, attributes)
    if tool_mode is None or not name or runtime is None:
        return lowering.finish(None)
    spans = {key: attributes.span(key) for key in ("name", "runtime", "mode", "executable_ref",
                                                   "command") if attributes.has(key)}
    return lowering.finish(ShellToolDecl(
        name=name, mode=tool_mode, runtime=runtime, description=description, stdin=stdin,
        rationale=rationale or "none", result=result or "combined",
        stream=stream or "finalized", nonzero=nonzero or "result", provenance=provenance,
        span=element.span, extent=element.full_span, attribute_spans=spans))
