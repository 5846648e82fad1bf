"""Built-in runtime profiles (spec §6.5): ``extends="builtin:NAME[@VERSION]"``.

A profile is a layer merged onto the defaults runtime, so every setting it
grants is attributed to it (``origin`` ``builtin:NAME@VERSION``). Without a
version the current one is used; the resolved runtime records both the
requested spelling and the concrete profile, so the alias and the pinned form
compile to different digests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs

from chatcommon.numbers import parse_int
from chatmd.shell.compile.defaults import defaults_runtime, platform_sandbox
from chatmd.shell.compile.merge import merge_runtime
from chatmd.shell.declare.matchers import AnyOf, BasenameIs
from chatmd.shell.declare.sections import (
    Approvals,
    Backend,
    Backends,
    Capabilities,
    Environment,
    Limits,
    PathEntry,
    Policy,
    Resolver,
    Root,
    Rule,
)
from chatmd.shell.declare.settings import Setting
from chatmd.shell.declare.typed_declarations import ShellAccessDecl
from chatmd.shell.declare.values import PathExpr

T = TypeVar("T")

PREFIX = "builtin:"
CURRENT_VERSION = 1
SYSTEM_SEARCH_PATH = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin")
SYSTEM_TRUSTED_ROOTS = ("/usr", "/bin")
DESTRUCTIVE_PROGRAMS = ("rm", "mv", "cp", "chmod", "chown", "sudo")
READ_TOOLS = ("pwd", "ls", "cat", "head", "tail", "wc", "grep", "rg")
KIB = 1024


@attrs.frozen
class ProfileRef:
    """A parsed ``builtin:NAME[@VERSION]`` reference."""

    name: str
    version: int | None

    @property
    def resolved(self) -> str:
        return f"{PREFIX}{self.name}@{self.version or CURRENT_VERSION}"


def parse_profile_ref(reference: str) -> ProfileRef | None:
    """The profile named by ``reference``, or None if it is not a known built-in profile."""
    if not reference.startswith(PREFIX):
        return None
    name, _, version_text = reference[len(PREFIX):].partition("@")
    if name not in _LAYERS:
        return None
    if not version_text:
        return ProfileRef(name, None)
    version = parse_int(version_text) if version_text.isascii() and version_text.isdigit() else None
    if version != CURRENT_VERSION:
        return None
    return ProfileRef(name, version)


def profile_names() -> tuple[str, ...]:
    return tuple(f"{PREFIX}{name}@{CURRENT_VERSION}" for name in _LAYERS)


class _Layer:
    """Builds one profile layer with every setting attributed to the profile."""

    def __init__(self, origin: str, source_dir: str) -> None:
        self.origin = origin
        self.source_dir = source_dir

    def set(self, value: T) -> Setting[T]:
        return Setting.of(value, origin=self.origin)

    def path(self, text: str) -> PathExpr:
        if text.startswith("${"):
            base = text[2:text.index("}")]
            return PathExpr(base, "", self.source_dir if base == "source_dir" else None)
        return PathExpr(None, text)

    def roots(self, *paths: str) -> tuple[Root, ...]:
        return tuple(Root(self.path(p), origin=self.origin) for p in paths)

    def entries(self, *paths: str) -> tuple[PathEntry, ...]:
        return tuple(PathEntry(self.path(p), origin=self.origin) for p in paths)

    def capabilities(self, sandbox: str, reads: tuple[str, ...], writes: tuple[str, ...],
                     powers: str) -> Capabilities:
        network, child, code, privilege = (flag == "T" for flag in powers)
        return Capabilities(sandbox=self.set(sandbox), network=self.set(network),
                            child_processes=self.set(child), arbitrary_code=self.set(code),
                            privilege_change=self.set(privilege), merge="replace",
                            reads=self.roots(*reads), writes=self.roots(*writes))

    def system_resolver(self) -> Resolver:
        return Resolver(search_paths=self.entries(*SYSTEM_SEARCH_PATH),
                        trusted_roots=self.entries(*SYSTEM_TRUSTED_ROOTS), merge="replace")

    def backends(self, platform: str, *, sandbox: bool, direct: bool) -> Backends:
        chosen = platform_sandbox(platform, self.origin) if sandbox else ()
        if direct:
            chosen += (Backend("direct", "builtin-direct", "any", origin=self.origin),)
        return Backends(merge="replace", backends=chosen, origin=self.origin)

    def runtime(self, **sections: Any) -> ShellAccessDecl:
        return ShellAccessDecl(id="", **sections)


def _workspace_readonly(layer: _Layer, platform: str) -> ShellAccessDecl:
    def basename_rule(ident: str, action: str, names: tuple[str, ...]) -> Rule:
        matcher = AnyOf(tuple(BasenameIs(name) for name in names))
        return Rule(ident, action, matcher, origin=layer.origin)

    return layer.runtime(
        cwd=layer.set(layer.path("${workspace}")),
        capabilities=layer.capabilities("required", ("${workspace}",), (), "FFFF"),
        resolver=layer.system_resolver(),
        backends=layer.backends(platform, sandbox=True, direct=False),
        policy=Policy(default=layer.set("ask"), merge="replace", rules=(
            basename_rule("builtin-deny-destructive", "deny", DESTRUCTIVE_PROGRAMS),
            basename_rule("builtin-allow-read-tools", "allow", READ_TOOLS))))


def _workspace_development(layer: _Layer, platform: str) -> ShellAccessDecl:
    return layer.runtime(
        cwd=layer.set(layer.path("${workspace}")),
        capabilities=layer.capabilities("preferred", ("${workspace}",), ("${workspace}",),
                                        "FTTF"),
        resolver=layer.system_resolver(),
        backends=layer.backends(platform, sandbox=True, direct=True),
        policy=Policy(default=layer.set("ask"), merge="replace"))


def _yolo(layer: _Layer, platform: str) -> ShellAccessDecl:
    return layer.runtime(
        cwd=layer.set(layer.path("${workspace}")),
        capabilities=layer.capabilities("direct_unsafe", ("/",), ("/",), "TTTT"),
        resolver=Resolver(trusted_roots=layer.entries("/"), merge="replace"),
        environment=Environment(inherit=layer.set("raw")),
        backends=layer.backends(platform, sandbox=False, direct=True),
        policy=Policy(default=layer.set("allow"), merge="replace"),
        approvals=Approvals(provider=layer.set("none")))


def _hook_worker(layer: _Layer, platform: str) -> ShellAccessDecl:
    return layer.runtime(
        cwd=layer.set(layer.path("${source_dir}")),
        capabilities=layer.capabilities("required", ("${source_dir}",), (), "FFTF"),
        resolver=layer.system_resolver(),
        backends=layer.backends(platform, sandbox=True, direct=False),
        policy=Policy(default=layer.set("deny"), merge="replace"),
        approvals=Approvals(provider=layer.set("none")),
        limits=Limits(wall_time=layer.set(5.0), idle_time=layer.set(2.0),
                      max_stdin=layer.set(1024 * KIB), stdout=layer.set(256 * KIB),
                      stderr=layer.set(64 * KIB), total_output=layer.set(320 * KIB)))


_LAYERS: dict[str, Callable[[_Layer, str], ShellAccessDecl]] = {
    "workspace-readonly": _workspace_readonly,
    "workspace-development": _workspace_development,
    "yolo": _yolo,
    "hook-worker": _hook_worker,
}


def expand_profile(reference: str, runtime_id: str, platform: str,
                   source_dir: str) -> ShellAccessDecl | None:
    """The resolved runtime of built-in profile ``reference`` (None if unknown).

    ``source_dir`` is the declaring folder of the runtime that extends the
    profile (``${source_dir}`` in ``hook-worker`` means that folder).
    """
    profile = parse_profile_ref(reference)
    if profile is None:
        return None
    layer = _Layer(profile.resolved, source_dir)
    declared = _LAYERS[profile.name](layer, platform)
    declared = attrs.evolve(declared, id=runtime_id, requested_profile=reference,
                            resolved_profile=profile.resolved)
    resolved, problems = merge_runtime(declared, defaults_runtime(runtime_id))
    assert not problems, problems  # profiles never clash with the defaults
    return resolved
