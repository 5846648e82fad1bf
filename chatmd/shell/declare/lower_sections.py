"""Lowering of the resource sections of ``<shell_access>`` (spec §3.2-§3.6, §3.8, §3.12).

Capabilities, resolver, environment, limits, backends, approvals and secrets:
each lowerer takes the section element and returns its typed form (or None
after reporting why it is invalid).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from chatmd.ast import Element
from chatmd.shell.declare.lowering import Attributes, Lowering, Path, child_elements, expect_empty
from chatmd.shell.declare.sections import (
    Approvals,
    Backend,
    Backends,
    Capabilities,
    Environment,
    EnvOperation,
    EnvPass,
    EnvPath,
    EnvPathEnv,
    EnvSet,
    EnvUnset,
    EnvUnsetPrefix,
    ExecutableAlias,
    Limits,
    PathEntry,
    Resolver,
    Root,
    Secrets,
    SecretSource,
    TemplateAtom,
)
from chatmd.shell.declare.settings import Setting

MERGE = ("append", "replace")
SANDBOX_MODES = ("required", "preferred", "direct_unsafe")
PLATFORMS = ("macos", "linux", "windows", "any")
ENV_INHERIT = ("none", "safe", "selected", "all_sanitized", "raw")
CONFINEMENTS = ("verified", "declared", "none")
APPROVAL_SCOPES = ("once", "exact_session", "prefix_session", "durable_exact")


def _unknown_child(lowering: Lowering, child: Element, parent: Element, path: Path,
                   allowed: tuple[str, ...]) -> None:
    lowering.error(child.span, "shell.unknown_element",
                   f"<{child.tag}> is not allowed inside <{parent.tag}>; expected "
                   + (", ".join(f"<{a}>" for a in allowed) if allowed else "no child elements"),
                   path)


def _children_text(allowed: tuple[str, ...]) -> str:
    return "only " + ", ".join(f"<{a}>" for a in allowed) + " elements"


T = TypeVar("T")


def _lower_children(lowering: Lowering, element: Element, path: Path, allowed: tuple[str, ...],
                    lower: Callable[[Lowering, Element, Path], T | None]) -> list[T]:
    """Each child of ``element`` in ``allowed`` lowered by ``lower``, in order (None dropped);
    any other child is ``shell.unknown_element``."""
    lowered: list[T] = []
    for child in child_elements(lowering, element, path, _children_text(allowed)):
        if child.tag in allowed:
            value = lower(lowering, child, path + (child.tag,))
            if value is not None:
                lowered.append(value)
        else:
            _unknown_child(lowering, child, element, path, allowed)
    return lowered


# ---------------------------------------------------------------- capabilities

def lower_root(lowering: Lowering, element: Element, path: Path) -> Root | None:
    attributes = Attributes(lowering, element, path, ("path", "path_env", "optional"))
    has_path, has_env = attributes.present("path"), attributes.present("path_env")
    if has_path == has_env:
        which = "both" if has_path else "neither"
        lowering.error(element.span, "shell.invalid_root",
                       f"<{element.tag}> needs exactly one of path or path_env, found {which}",
                       path, hint=f'write <{element.tag} path="${{workspace}}"/> or '
                       f'<{element.tag} path_env="HOME"/>')
        return None
    path_value = attributes.path_expr("path", required=has_path)
    env = attributes.env_name("path_env", required=has_env)
    optional = attributes.boolean("optional", False)
    expect_empty(lowering, element, path)
    if path_value is None and env is None:
        return None
    return Root(path_value, env, optional, span=element.span, origin=lowering.origin)


def lower_capabilities(lowering: Lowering, element: Element) -> Capabilities:
    path: Path = ("capabilities",)
    attributes = Attributes(lowering, element, path,
                            ("sandbox", "network", "child_processes", "arbitrary_code",
                             "privilege_change", "merge"))
    reads: list[Root] = []
    writes: list[Root] = []
    for child in child_elements(lowering, element, path, _children_text(("read", "write"))):
        if child.tag in ("read", "write"):
            root = lower_root(lowering, child, path + (child.tag,))
            if root is not None:
                (reads if child.tag == "read" else writes).append(root)
        else:
            _unknown_child(lowering, child, element, path, ("read", "write"))
    return Capabilities(
        sandbox=attributes.setting_enum("sandbox", SANDBOX_MODES),
        network=attributes.setting_bool("network"),
        child_processes=attributes.setting_bool("child_processes"),
        arbitrary_code=attributes.setting_bool("arbitrary_code"),
        privilege_change=attributes.setting_bool("privilege_change"),
        merge=attributes.enum("merge", MERGE, default="append") or "append",
        reads=tuple(reads), writes=tuple(writes), span=element.span)


# -------------------------------------------------------------------- resolver

def _path_entry(lowering: Lowering, element: Element, path: Path) -> PathEntry | None:
    attributes = Attributes(lowering, element, path, ("path",))
    value = attributes.path_expr("path", required=True)
    expect_empty(lowering, element, path)
    return None if value is None else PathEntry(value, span=element.span, origin=lowering.origin)


def _executable_alias(lowering: Lowering, element: Element, path: Path) -> ExecutableAlias | None:
    attributes = Attributes(lowering, element, path,
                            ("id", "path", "sha256", "trusted", "override"))
    ident = attributes.text("id", required=True)
    value = attributes.path_expr("path", required=True)
    sha256 = attributes.sha256()
    trusted = attributes.boolean("trusted", False)
    override = attributes.boolean("override", False)
    expect_empty(lowering, element, path)
    if ident is None or value is None:
        return None
    return ExecutableAlias(ident, value, sha256, trusted, override, span=element.span,
                           origin=lowering.origin)


RESOLVER_CHILDREN = ("search_path", "trusted_root", "executable")


def lower_resolver(lowering: Lowering, element: Element) -> Resolver:
    path: Path = ("resolver",)
    attributes = Attributes(lowering, element, path, ("allow_relative_search_path", "merge"))
    search: list[PathEntry] = []
    trusted: list[PathEntry] = []
    aliases: list[ExecutableAlias] = []
    for child in child_elements(lowering, element, path, _children_text(RESOLVER_CHILDREN)):
        child_path = path + (child.tag,)
        if child.tag in ("search_path", "trusted_root"):
            entry = _path_entry(lowering, child, child_path)
            if entry is not None:
                (search if child.tag == "search_path" else trusted).append(entry)
        elif child.tag == "executable":
            alias = _executable_alias(lowering, child, child_path)
            if alias is not None:
                aliases.append(alias)
        else:
            _unknown_child(lowering, child, element, path, RESOLVER_CHILDREN)
    return Resolver(
        allow_relative_search_path=attributes.setting_bool("allow_relative_search_path"),
        merge=attributes.enum("merge", MERGE, default="append") or "append",
        search_paths=tuple(search), trusted_roots=tuple(trusted), executables=tuple(aliases),
        span=element.span)


# ----------------------------------------------------------------- environment

ENVIRONMENT_CHILDREN = ("set", "pass", "unset", "unset_prefix", "path", "path_env")


def _env_operation(lowering: Lowering, element: Element, path: Path) -> EnvOperation | None:
    tag = element.tag
    origin = lowering.origin
    span = element.span
    operation: EnvOperation | None = None
    if tag == "set":
        attributes = Attributes(lowering, element, path, ("name", "value"))
        name = attributes.env_name("name", required=True)
        value = attributes.text("value", required=True)
        if name is not None and value is not None:
            operation = EnvSet(name, value, span=span, origin=origin)
    elif tag == "pass":
        attributes = Attributes(lowering, element, path, ("name", "required", "secret"))
        name = attributes.env_name("name", required=True)
        required = attributes.boolean("required", False)
        secret = attributes.boolean("secret", False)
        if name is not None:
            operation = EnvPass(name, required, secret, span=span, origin=origin)
    elif tag == "unset":
        attributes = Attributes(lowering, element, path, ("name",))
        name = attributes.env_name("name", required=True)
        if name is not None:
            operation = EnvUnset(name, span=span, origin=origin)
    elif tag == "unset_prefix":
        attributes = Attributes(lowering, element, path, ("value",))
        prefix = attributes.text("value", required=True)
        if prefix is not None:
            operation = EnvUnsetPrefix(prefix, span=span, origin=origin)
    elif tag == "path":
        attributes = Attributes(lowering, element, path, ("prepend", "append"))
        given = [name for name in ("prepend", "append") if attributes.present(name)]
        if len(given) != 1:
            found = "both" if given else "neither"
            lowering.error(span, "shell.invalid_path_operation",
                           f"<path> needs exactly one of prepend or append, found {found}",
                           path, hint='write <path prepend="/opt/bin"/> or '
                           '<path append="/opt/bin"/>')
        else:
            expr = attributes.path_expr(given[0], required=True)
            if expr is not None:
                operation = EnvPath(given[0], expr, span=span, origin=origin)
    else:  # path_env
        attributes = Attributes(lowering, element, path,
                                ("name", "suffix", "position", "required"))
        name = attributes.env_name("name", required=True)
        suffix = attributes.string("suffix")
        position = attributes.enum("position", ("prepend", "append"), default="append")
        required = attributes.boolean("required", False)
        if name is not None:
            operation = EnvPathEnv(name, suffix, position or "append", required, span=span,
                                   origin=origin)
    expect_empty(lowering, element, path)
    return operation


def lower_environment(lowering: Lowering, element: Element) -> Environment:
    path: Path = ("environment",)
    attributes = Attributes(lowering, element, path, ("inherit", "merge"))
    operations: list[EnvOperation] = _lower_children(lowering, element, path,
                                                     ENVIRONMENT_CHILDREN, _env_operation)
    return Environment(inherit=attributes.setting_enum("inherit", ENV_INHERIT),
                       merge=attributes.enum("merge", MERGE, default="append") or "append",
                       operations=tuple(operations), span=element.span)


# ---------------------------------------------------------------------- limits

def lower_limits(lowering: Lowering, element: Element) -> Limits:
    path: Path = ("limits",)
    attributes = Attributes(lowering, element, path,
                            ("wall_time", "idle_time", "max_stdin", "stdout", "stderr",
                             "total_output", "cpu_time", "memory", "file_size", "open_files"))
    limits = Limits(
        wall_time=attributes.setting_duration("wall_time", clearable=True),
        idle_time=attributes.setting_duration("idle_time", clearable=True),
        max_stdin=attributes.setting_bytes("max_stdin"),
        stdout=attributes.setting_bytes("stdout"),
        stderr=attributes.setting_bytes("stderr"),
        total_output=attributes.setting_bytes("total_output"),
        cpu_time=attributes.setting_duration("cpu_time", clearable=True),
        memory=attributes.setting_bytes("memory"),
        file_size=attributes.setting_bytes("file_size"),
        open_files=attributes.setting_uint("open_files"),
        span=element.span)
    expect_empty(lowering, element, path)
    return limits


# -------------------------------------------------------------------- backends

BACKEND_KINDS = ("seatbelt", "bubblewrap", "direct", "external_backend")
TEMPLATE_ATOMS = ("arg", "cwd_value", "target_executable", "command_argv", "read_roots",
                  "write_roots", "network_flag", "resource_limit_args")
_ATOM_VALUE = {"arg": "value", "network_flag": "value", "read_roots": "flag",
               "write_roots": "flag"}


def _template_atom(lowering: Lowering, element: Element, path: Path) -> TemplateAtom | None:
    value_name = _ATOM_VALUE.get(element.tag)
    attributes = Attributes(lowering, element, path, (value_name,) if value_name else ())
    value = attributes.text(value_name, required=True) if value_name else None
    expect_empty(lowering, element, path)
    if value_name and value is None:
        return None
    return TemplateAtom(element.tag, value, span=element.span)


def _backend(lowering: Lowering, element: Element, path: Path) -> Backend | None:
    kind = element.tag
    names: tuple[str, ...] = ("id", "when")
    if kind == "seatbelt":
        names += ("executable", "allow_system_reads")
    elif kind == "bubblewrap":
        names += ("executable", "private_tmp", "proc", "dev")
    elif kind == "external_backend":
        names += ("executable", "sha256", "confinement")
    attributes = Attributes(lowering, element, path, names)
    ident = attributes.non_empty("id")
    when = attributes.enum("when", PLATFORMS, default="any") or "any"
    executable = attributes.path_expr("executable", required=kind == "external_backend")
    options: tuple[tuple[str, bool | str], ...] = ()
    template: list[TemplateAtom] = []
    sha256 = confinement = None
    if kind == "seatbelt":
        options = (("allow_system_reads", attributes.boolean("allow_system_reads", True)),)
    elif kind == "bubblewrap":
        options = (("dev", attributes.string("dev", default="minimal") or ""),
                   ("private_tmp", attributes.boolean("private_tmp", True)),
                   ("proc", attributes.boolean("proc", True)))
    if kind == "external_backend":
        sha256 = attributes.sha256()
        confinement = attributes.enum("confinement", CONFINEMENTS, default="none")
        template = _lower_children(lowering, element, path, TEMPLATE_ATOMS, _template_atom)
    else:
        expect_empty(lowering, element, path)
    if kind == "external_backend" and executable is None:
        return None
    return Backend(kind, ident, when, executable, sha256, confinement, options,
                   tuple(template), span=element.span, origin=lowering.origin)


def lower_backends(lowering: Lowering, element: Element) -> Backends:
    path: Path = ("backends",)
    attributes = Attributes(lowering, element, path, ("accept_declared_confinement", "merge"))
    backends = _lower_children(lowering, element, path, BACKEND_KINDS, _backend)
    return Backends(
        accept_declared_confinement=attributes.boolean("accept_declared_confinement", False),
        merge=attributes.enum("merge", MERGE, default="append") or "append",
        backends=tuple(backends), span=element.span, origin=lowering.origin)


# ------------------------------------------------------------------- approvals

def _parse_scopes(attributes: Attributes) -> Setting[tuple[str, ...]]:
    setting = attributes.setting_csv("scopes")
    if setting.state == "set" and setting.value is not None:
        unknown = [scope for scope in setting.value if scope not in APPROVAL_SCOPES]
        if unknown:
            attributes.value_error("scopes", "shell.invalid_attribute",
                                   f"invalid value for scopes: unknown approval scope "
                                   f"{unknown[0]!r}; expected items among "
                                   + ", ".join(APPROVAL_SCOPES))
            return Setting.inherit()
    return setting


def lower_approvals(lowering: Lowering, element: Element) -> Approvals:
    path: Path = ("approvals",)
    attributes = Attributes(lowering, element, path,
                            ("provider", "unavailable", "scopes", "durable"))
    approvals = Approvals(provider=attributes.setting_enum("provider", ("ui", "none")),
                          unavailable=attributes.setting_enum("unavailable", ("deny", "error")),
                          scopes=_parse_scopes(attributes),
                          durable=attributes.setting_bool("durable"),
                          span=element.span)
    expect_empty(lowering, element, path)
    return approvals


# --------------------------------------------------------------------- secrets

SECRET_SOURCES = ("from_env", "from_file", "literal")


def _secret_source(lowering: Lowering, element: Element, path: Path) -> SecretSource | None:
    tag = element.tag
    span, origin = element.span, lowering.origin
    source: SecretSource | None = None
    if tag == "from_env":
        attributes = Attributes(lowering, element, path, ("name", "optional"))
        name = attributes.env_name("name", required=True)
        optional = attributes.boolean("optional", False)
        if name is not None:
            source = SecretSource(tag, name=name, optional=optional, span=span, origin=origin)
    elif tag == "from_file":
        attributes = Attributes(lowering, element, path, ("path", "optional", "strip"))
        value = attributes.path_expr("path", required=True)
        optional = attributes.boolean("optional", False)
        strip = attributes.boolean("strip", True)
        if value is not None:
            source = SecretSource(tag, path=value, optional=optional, strip=strip, span=span,
                                  origin=origin)
    else:
        attributes = Attributes(lowering, element, path, ("value",))
        secret = attributes.text("value", required=True)
        if secret is not None:
            source = SecretSource(tag, value=secret, span=span, origin=origin)
    expect_empty(lowering, element, path)
    return source


def lower_secrets(lowering: Lowering, element: Element) -> Secrets:
    path: Path = ("secrets",)
    attributes = Attributes(lowering, element, path, ("replacement", "merge"))
    sources = _lower_children(lowering, element, path, SECRET_SOURCES, _secret_source)
    return Secrets(replacement=attributes.setting_string("replacement"),
                   merge=attributes.enum("merge", MERGE, default="append") or "append",
                   sources=tuple(sources), span=element.span)
