"""The typed sections of a ``<shell_access>`` runtime (spec §3.2-§3.13).

One attrs class per section and per entry kind. A declared runtime leaves a
section None when it does not declare it; a resolved runtime (after
inheritance, spec §6) has every section and only ``set``/``clear`` settings.
Entries carry their source span and the inheritance layer they came from
(bookkeeping fields, see :mod:`chatmd.shell.declare.settings`).
"""

from __future__ import annotations

import attrs

from chatcommon.sources import Span
from chatmd.shell.declare.matchers import Matcher
from chatmd.shell.declare.settings import Setting, merge_field, origin_field, span_field
from chatmd.shell.declare.values import PathExpr

# ---------------------------------------------------------------- capabilities


@attrs.frozen
class Root:
    """A ``<read>``/``<write>`` root: a path, or an environment variable naming one."""

    path: PathExpr | None
    path_env: str | None = None
    optional: bool = False
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class Capabilities:
    sandbox: Setting[str] = Setting.inherit()
    network: Setting[bool] = Setting.inherit()
    child_processes: Setting[bool] = Setting.inherit()
    arbitrary_code: Setting[bool] = Setting.inherit()
    privilege_change: Setting[bool] = Setting.inherit()
    merge: str = merge_field()
    reads: tuple[Root, ...] = ()
    writes: tuple[Root, ...] = ()
    span: Span | None = span_field()


POWERS: tuple[str, ...] = ("network", "child_processes", "arbitrary_code", "privilege_change")

# -------------------------------------------------------------------- resolver


@attrs.frozen
class PathEntry:
    """A ``<search_path>`` or ``<trusted_root>`` directory."""

    path: PathExpr
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class ExecutableAlias:
    id: str
    path: PathExpr
    sha256: str | None = None
    trusted: bool = False
    override: bool = False
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class Resolver:
    allow_relative_search_path: Setting[bool] = Setting.inherit()
    merge: str = merge_field()
    search_paths: tuple[PathEntry, ...] = ()
    trusted_roots: tuple[PathEntry, ...] = ()
    executables: tuple[ExecutableAlias, ...] = ()
    span: Span | None = span_field()

# ----------------------------------------------------------------- environment


@attrs.frozen
class EnvSet:
    TAG = "set"
    name: str
    value: str
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class EnvPass:
    TAG = "pass"
    name: str
    required: bool = False
    secret: bool = False
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class EnvUnset:
    TAG = "unset"
    name: str
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class EnvUnsetPrefix:
    TAG = "unset_prefix"
    prefix: str
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class EnvPath:
    """``<path prepend=P/>`` or ``<path append=P/>``."""

    TAG = "path"
    position: str
    path: PathExpr
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class EnvPathEnv:
    TAG = "path_env"
    name: str
    suffix: str | None = None
    position: str = "append"
    required: bool = False
    span: Span | None = span_field()
    origin: str = origin_field()


EnvOperation = EnvSet | EnvPass | EnvUnset | EnvUnsetPrefix | EnvPath | EnvPathEnv


@attrs.frozen
class Environment:
    inherit: Setting[str] = Setting.inherit()
    merge: str = merge_field()
    operations: tuple[EnvOperation, ...] = ()
    span: Span | None = span_field()

# ---------------------------------------------------------------------- limits


@attrs.frozen
class Limits:
    wall_time: Setting[float] = Setting.inherit()
    idle_time: Setting[float] = Setting.inherit()
    max_stdin: Setting[int] = Setting.inherit()
    stdout: Setting[int] = Setting.inherit()
    stderr: Setting[int] = Setting.inherit()
    total_output: Setting[int] = Setting.inherit()
    cpu_time: Setting[float] = Setting.inherit()
    memory: Setting[int] = Setting.inherit()
    file_size: Setting[int] = Setting.inherit()
    open_files: Setting[int] = Setting.inherit()
    span: Span | None = span_field()


DURATION_LIMITS: tuple[str, ...] = ("wall_time", "idle_time", "cpu_time")
BYTE_LIMITS: tuple[str, ...] = ("max_stdin", "stdout", "stderr", "total_output", "memory",
                                "file_size")
LIMIT_NAMES: tuple[str, ...] = tuple(f.name for f in attrs.fields(Limits) if f.name != "span")
#: Limits that need an OS enforcement mechanism (feature ``shell.resource_limits.v1``).
RESOURCE_LIMITS: tuple[str, ...] = ("cpu_time", "memory", "file_size", "open_files")

# -------------------------------------------------------------------- backends


@attrs.frozen
class TemplateAtom:
    """One atom of an ``<external_backend>`` argv template (``value``: arg/flag text)."""

    kind: str
    value: str | None = None
    span: Span | None = span_field()


@attrs.frozen
class Backend:
    """A backend entry; ``kind`` is seatbelt, bubblewrap, direct or external_backend.

    Kind-specific options live in ``options`` (sorted name/value pairs with the
    defaults filled in) so that one class serves all four kinds.
    """

    kind: str
    id: str | None = None
    when: str = "any"
    executable: PathExpr | None = None
    sha256: str | None = None
    confinement: str | None = None
    options: tuple[tuple[str, bool | str], ...] = ()
    template: tuple[TemplateAtom, ...] = ()
    span: Span | None = span_field()
    origin: str = origin_field()

    def matches(self, platform: str) -> bool:
        """Whether this backend applies on compile ``platform``."""
        return self.when == "any" or self.when == platform

    @property
    def is_confining(self) -> bool:
        if self.kind == "external_backend":
            return self.confinement != "none"
        return self.kind in ("seatbelt", "bubblewrap")

    @property
    def is_direct(self) -> bool:
        if self.kind == "external_backend":
            return self.confinement == "none"
        return self.kind == "direct"


@attrs.frozen
class Backends:
    accept_declared_confinement: bool = False
    merge: str = merge_field()
    backends: tuple[Backend, ...] = ()
    span: Span | None = span_field()
    origin: str = origin_field()

# ---------------------------------------------------------------------- policy


@attrs.frozen
class Rule:
    id: str
    action: str
    matcher: Matcher
    override: bool = False
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class Policy:
    default: Setting[str] = Setting.inherit()
    merge: str = merge_field()
    rules: tuple[Rule, ...] = ()
    span: Span | None = span_field()


@attrs.frozen
class Approvals:
    provider: Setting[str] = Setting.inherit()
    unavailable: Setting[str] = Setting.inherit()
    scopes: Setting[tuple[str, ...]] = Setting.inherit()
    durable: Setting[bool] = Setting.inherit()
    span: Span | None = span_field()

# ------------------------------------------------------------------ extensions


@attrs.frozen
class Hook:
    """An executable hook: run through the worker runtime ``runtime`` (qualified id)."""

    executable: PathExpr
    runtime: str
    sha256: str | None = None
    protocol: str = "shell-hook-json-v1"
    timeout: float | None = None
    max_input: int = 1024 * 1024
    max_output: int = 256 * 1024
    runtime_span: Span | None = span_field()


@attrs.frozen
class Reviewer:
    """A reviewer; only the fields of its ``kind`` are filled in."""

    id: str
    kind: str
    failure: str | None = None
    script: str | None = None
    lifecycle: str | None = None
    agent: str | None = None
    model: str | None = None
    hook: Hook | None = None
    span: Span | None = span_field()
    script_span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class Reviewers:
    strategy: str = "first_terminal"
    reviewers: tuple[Reviewer, ...] = ()
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class Interceptor:
    id: str
    phase: str
    failure: str = "deny"
    script: str | None = None
    lifecycle: str | None = None
    hook: Hook | None = None
    match: Matcher | None = None
    span: Span | None = span_field()
    script_span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class Interceptors:
    interceptors: tuple[Interceptor, ...] = ()
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class Analyzer:
    id: str
    kind: str = "chatml"
    failure: str = "unknown"
    replace: bool = False
    script: str | None = None
    lifecycle: str | None = None
    hook: Hook | None = None
    span: Span | None = span_field()
    script_span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class EffectAnalysis:
    analyzers: tuple[Analyzer, ...] = ()
    span: Span | None = span_field()
    origin: str = origin_field()

# --------------------------------------------------------------------- secrets


@attrs.frozen
class SecretSource:
    """``from_env`` (name), ``from_file`` (path, strip) or ``literal`` (value, never hashed)."""

    kind: str
    name: str | None = None
    path: PathExpr | None = None
    optional: bool = False
    strip: bool = True
    value: str | None = attrs.field(default=None, repr=False)
    span: Span | None = span_field()
    origin: str = origin_field()


@attrs.frozen
class Secrets:
    replacement: Setting[str] = Setting.inherit()
    merge: str = merge_field()
    sources: tuple[SecretSource, ...] = ()
    span: Span | None = span_field()

# ----------------------------------------------------------------------- audit


@attrs.frozen
class AuditFilter:
    script: str | None = None
    lifecycle: str | None = None
    hook: Hook | None = None
    span: Span | None = span_field()
    script_span: Span | None = span_field()


@attrs.frozen
class Audit:
    format: str
    path: PathExpr | None = None
    content: str = "redacted"
    failure: str = "continue"
    filter: AuditFilter | None = None
    span: Span | None = span_field()
    origin: str = origin_field()


SECTION_NAMES: tuple[str, ...] = (
    "capabilities", "resolver", "environment", "limits", "backends", "policy", "approvals",
    "reviewers", "interceptors", "effect_analysis", "secrets", "audit",
)
