"""The defaults runtime (spec §6.4): the base every root runtime is merged onto.

Every setting is explicit here, so a compiled runtime never depends on a
hidden default; ``origin`` is ``defaults`` throughout.
"""

from __future__ import annotations

from typing import TypeVar

from chatmd.shell.declare.sections import (
    Approvals,
    Audit,
    Backend,
    Backends,
    Capabilities,
    EffectAnalysis,
    Environment,
    Interceptors,
    Limits,
    Policy,
    Resolver,
    Reviewers,
    Secrets,
)
from chatmd.shell.declare.settings import DEFAULTS_ORIGIN, Setting
from chatmd.shell.declare.typed_declarations import ShellAccessDecl
from chatmd.shell.declare.values import PathExpr

T = TypeVar("T")

MIB = 1024 * 1024

SEATBELT_OPTIONS: tuple[tuple[str, bool | str], ...] = (("allow_system_reads", True),)
BUBBLEWRAP_OPTIONS: tuple[tuple[str, bool | str], ...] = (
    ("dev", "minimal"), ("private_tmp", True), ("proc", True))


def platform_sandbox(platform: str, origin: str) -> tuple[Backend, ...]:
    """The confining backend of ``platform``: seatbelt on macOS, bubblewrap on Linux."""
    if platform == "macos":
        return (Backend("seatbelt", "builtin-seatbelt", "macos", options=SEATBELT_OPTIONS,
                        origin=origin),)
    if platform == "linux":
        return (Backend("bubblewrap", "builtin-bubblewrap", "linux", options=BUBBLEWRAP_OPTIONS,
                        origin=origin),)
    return ()


def default_limits(origin: str = DEFAULTS_ORIGIN) -> Limits:
    cleared = Setting.cleared(origin=origin)
    return Limits(wall_time=Setting.of(180.0, origin=origin),
                  idle_time=Setting.of(60.0, origin=origin),
                  max_stdin=Setting.of(MIB, origin=origin),
                  stdout=Setting.of(1_000_000, origin=origin),
                  stderr=Setting.of(1_000_000, origin=origin),
                  total_output=Setting.of(1_500_000, origin=origin),
                  cpu_time=cleared, memory=cleared, file_size=cleared, open_files=cleared)


def _set(value: T) -> Setting[T]:
    return Setting.of(value, origin=DEFAULTS_ORIGIN)


def defaults_runtime(runtime_id: str) -> ShellAccessDecl:
    """The fully resolved defaults runtime, under id ``runtime_id``."""
    origin = DEFAULTS_ORIGIN
    return ShellAccessDecl(
        id=runtime_id,
        cwd=_set(PathExpr("tool_dir", "")),
        pipefail=_set(False),
        capabilities=Capabilities(sandbox=_set("required"), network=_set(False),
                                  child_processes=_set(False), arbitrary_code=_set(False),
                                  privilege_change=_set(False)),
        resolver=Resolver(allow_relative_search_path=_set(False)),
        environment=Environment(inherit=_set("safe")),
        limits=default_limits(origin),
        backends=Backends(backends=(
            Backend("seatbelt", "builtin-seatbelt", "macos", options=SEATBELT_OPTIONS,
                    origin=origin),
            Backend("bubblewrap", "builtin-bubblewrap", "linux", options=BUBBLEWRAP_OPTIONS,
                    origin=origin)), origin=origin),
        policy=Policy(default=_set("ask")),
        approvals=Approvals(provider=_set("ui"), unavailable=_set("deny"),
                            scopes=_set(("once", "exact_session")), durable=_set(False)),
        reviewers=Reviewers(origin=origin),
        interceptors=Interceptors(origin=origin),
        effect_analysis=EffectAnalysis(origin=origin),
        secrets=Secrets(replacement=_set("[REDACTED]")),
        audit=Audit("none", origin=origin),
    )
